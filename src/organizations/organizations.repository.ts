import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { OrganizationEntity } from './entities/organization.entity.js';

@Injectable()
export class OrganizationsRepository {
  private readonly organizations: Repository<OrganizationEntity>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.organizations = dataSource.getRepository(OrganizationEntity);
  }

  findById(id: string): Promise<OrganizationEntity | null> {
    return this.organizations.findOne({ where: { id } });
  }

  /** `manager` runs the query inside a caller's transaction (the admin `apply`). */
  findBySlug(slug: string, manager?: EntityManager): Promise<OrganizationEntity | null> {
    return this.using(manager).findOne({ where: { slug } });
  }

  list(): Promise<OrganizationEntity[]> {
    return this.organizations.find({ order: { createdAt: 'ASC' } });
  }

  count(): Promise<number> {
    return this.organizations.count();
  }

  save(organization: OrganizationEntity, manager?: EntityManager): Promise<OrganizationEntity> {
    return this.using(manager).save(organization);
  }

  async setRateLimit(id: string, perMinute: number | null): Promise<boolean> {
    const result = await this.organizations.update({ id }, { rateLimitPerMinute: perMinute });
    return (result.affected ?? 0) > 0;
  }

  private using(manager: EntityManager | undefined): Repository<OrganizationEntity> {
    return manager ? manager.getRepository(OrganizationEntity) : this.organizations;
  }
}
