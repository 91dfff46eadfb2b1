import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { TransactionalConnection } from '../database/transactional-connection.js';
import { McpGatewayEntity } from './entities/mcp-gateway.entity.js';
import { OrganizationRowsRepository } from '../database/organization-rows.repository.js';

@Injectable()
export class McpGatewaysRepository extends OrganizationRowsRepository<McpGatewayEntity> {
  constructor(connection: TransactionalConnection) {
    super(connection, McpGatewayEntity);
  }

  /**
   * The request-path lookup: the gateways of this name, one per organization that uses it, with
   * their organization; the caller's token then selects the one of its organization.
   */
  findAllByNameWithOrganization(name: string): Promise<McpGatewayEntity[]> {
    return this.rows().find({ where: { name }, relations: { organization: true }, take: 1000 });
  }

  findForOrganization(
    organizationId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<McpGatewayEntity | null> {
    return this.rows(manager).findOne({ where: { organizationId, name } });
  }

  listForOrganization(organizationId: string): Promise<McpGatewayEntity[]> {
    return this.rows().find({ where: { organizationId }, order: { name: 'ASC' } });
  }

  async deleteForOrganization(
    organizationId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<boolean> {
    const result = await this.rows(manager).delete({ organizationId, name });
    return (result.affected ?? 0) > 0;
  }
}
