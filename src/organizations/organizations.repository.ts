import { Injectable } from '@nestjs/common';
import type { EntityManager, Repository } from 'typeorm';
import { TransactionalConnection } from '../database/transactional-connection.js';
import { OrganizationEntity } from './entities/organization.entity.js';

@Injectable()
export class OrganizationsRepository {
  private readonly organizations: Repository<OrganizationEntity>;

  constructor(private readonly connection: TransactionalConnection) {
    this.organizations = connection.getRepository(OrganizationEntity);
  }

  findById(id: string, manager?: EntityManager): Promise<OrganizationEntity | null> {
    return this.connection.getRepository(OrganizationEntity, manager).findOne({ where: { id } });
  }

  /** `manager` runs the query inside a caller's transaction (the admin `apply`). */
  findBySlug(slug: string, manager?: EntityManager): Promise<OrganizationEntity | null> {
    return this.connection.getRepository(OrganizationEntity, manager).findOne({ where: { slug } });
  }

  list(): Promise<OrganizationEntity[]> {
    return this.organizations.find({ order: { createdAt: 'ASC' } });
  }

  count(): Promise<number> {
    return this.organizations.count();
  }

  save(organization: OrganizationEntity, manager?: EntityManager): Promise<OrganizationEntity> {
    return this.connection.getRepository(OrganizationEntity, manager).save(organization);
  }

  async setMonthlyTokenBudget(id: string, tokens: number | null): Promise<boolean> {
    const result = await this.organizations.update({ id }, { monthlyTokenBudget: tokens });
    return (result.affected ?? 0) > 0;
  }

  async update(
    id: string,
    fields: Partial<Pick<OrganizationEntity, 'secretEnvGrants' | 'ssrfAllowlist'>>,
  ): Promise<boolean> {
    const result = await this.organizations.update({ id }, fields);
    return (result.affected ?? 0) > 0;
  }

  async setRateLimit(id: string, perMinute: number | null): Promise<boolean> {
    const result = await this.organizations.update({ id }, { rateLimitPerMinute: perMinute });
    return (result.affected ?? 0) > 0;
  }
}
