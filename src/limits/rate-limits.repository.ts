import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { OrganizationEntity } from '../organizations/entities/organization.entity.js';

@Injectable()
export class RateLimitsRepository {
  private readonly organizations: Repository<OrganizationEntity>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.organizations = dataSource.getRepository(OrganizationEntity);
  }

  /** The organization's own requests-per-minute limit; null when it has none. */
  async findOrganizationLimit(organizationId: string): Promise<number | null> {
    const organization = await this.organizations.findOne({
      where: { id: organizationId },
      select: { id: true, rateLimitPerMinute: true },
    });
    return organization?.rateLimitPerMinute ?? null;
  }
}
