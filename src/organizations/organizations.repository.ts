import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
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

  findBySlug(slug: string): Promise<OrganizationEntity | null> {
    return this.organizations.findOne({ where: { slug } });
  }

  list(): Promise<OrganizationEntity[]> {
    return this.organizations.find({ order: { createdAt: 'ASC' } });
  }

  count(): Promise<number> {
    return this.organizations.count();
  }

  save(organization: OrganizationEntity): Promise<OrganizationEntity> {
    return this.organizations.save(organization);
  }

  async setRateLimit(id: string, perMinute: number | null): Promise<boolean> {
    const result = await this.organizations.update({ id }, { rateLimitPerMinute: perMinute });
    return (result.affected ?? 0) > 0;
  }
}
