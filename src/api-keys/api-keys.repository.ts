import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, type EntityManager, Repository } from 'typeorm';
import { ApiKeyEntity } from './entities/api-key.entity.js';

@Injectable()
export class ApiKeysRepository {
  private readonly keys: Repository<ApiKeyEntity>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.keys = dataSource.getRepository(ApiKeyEntity);
  }

  /** The authentication lookup: by hash, across organizations (the key names its organization). */
  findActiveByHash(keyHash: string): Promise<ApiKeyEntity | null> {
    return this.keys.findOne({ where: { keyHash, revokedAt: IsNull() } });
  }

  findByHash(keyHash: string): Promise<ApiKeyEntity | null> {
    return this.keys.findOne({ where: { keyHash } });
  }

  findForOrganization(organizationId: string, keyId: string): Promise<ApiKeyEntity | null> {
    return this.keys.findOne({ where: { id: keyId, organizationId } });
  }

  listForOrganization(organizationId: string): Promise<ApiKeyEntity[]> {
    return this.keys.find({ where: { organizationId }, order: { createdAt: 'ASC' } });
  }

  /** The organization's keys not revoked (its quota counts these). */
  countActive(organizationId: string, manager?: EntityManager): Promise<number> {
    return (manager?.getRepository(ApiKeyEntity) ?? this.keys).count({
      where: { organizationId, revokedAt: IsNull() },
    });
  }

  insert(key: ApiKeyEntity, manager?: EntityManager): Promise<ApiKeyEntity> {
    return (manager?.getRepository(ApiKeyEntity) ?? this.keys).save(key);
  }

  /** Revokes one key of one organization; false when it is not that organization's active key. */
  async revoke(organizationId: string, keyId: string, at: Date, manager?: EntityManager): Promise<boolean> {
    const result = await (manager?.getRepository(ApiKeyEntity) ?? this.keys).update(
      { id: keyId, organizationId, revokedAt: IsNull() },
      { revokedAt: at },
    );
    return (result.affected ?? 0) > 0;
  }

  async touchLastUsed(keyId: string, at: Date): Promise<void> {
    await this.keys.update({ id: keyId }, { lastUsedAt: at });
  }

  /** A key by hash inside `manager`'s transaction (the declarative apply). */
  findByHashIn(keyHash: string, manager: EntityManager): Promise<ApiKeyEntity | null> {
    return manager.getRepository(ApiKeyEntity).findOne({ where: { keyHash } });
  }

  saveIn(key: ApiKeyEntity, manager: EntityManager): Promise<ApiKeyEntity> {
    return manager.getRepository(ApiKeyEntity).save(key);
  }

  /** `apply --prune`: revokes the organization's active keys whose hash is not in `keep`. */
  async revokeExcept(
    organizationId: string,
    keep: readonly string[],
    at: Date,
    manager: EntityManager,
  ): Promise<ApiKeyEntity[]> {
    const result = await manager
      .createQueryBuilder()
      .update(ApiKeyEntity)
      .set({ revokedAt: at })
      .where('organization_id = :organizationId AND revoked_at IS NULL', { organizationId })
      .andWhere('NOT (key_hash = ANY(:keep))', { keep: [...keep] })
      .returning(['id', 'name'])
      .execute();
    return result.raw as ApiKeyEntity[];
  }
}
