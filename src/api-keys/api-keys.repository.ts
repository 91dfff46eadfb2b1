import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, Repository, type EntityManager } from 'typeorm';
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
}
