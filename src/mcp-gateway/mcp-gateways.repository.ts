import { Injectable } from '@nestjs/common';
import type { EntityManager, Repository } from 'typeorm';
import { TransactionalConnection } from '../database/transactional-connection.js';
import { McpGatewayEntity } from './entities/mcp-gateway.entity.js';
import { deleteExcept, type DeletedRow } from '../database/delete-except.js';

@Injectable()
export class McpGatewaysRepository {
  private readonly gateways: Repository<McpGatewayEntity>;

  constructor(private readonly connection: TransactionalConnection) {
    this.gateways = connection.getRepository(McpGatewayEntity);
  }

  /**
   * The request-path lookup: the gateways of this name, one per organization that uses it, with
   * their organization; the caller's token then selects the one of its organization.
   */
  findAllByNameWithOrganization(name: string): Promise<McpGatewayEntity[]> {
    return this.gateways.find({ where: { name }, relations: { organization: true }, take: 1000 });
  }

  findForOrganization(
    organizationId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<McpGatewayEntity | null> {
    return this.connection
      .getRepository(McpGatewayEntity, manager)
      .findOne({ where: { organizationId, name } });
  }

  listForOrganization(organizationId: string): Promise<McpGatewayEntity[]> {
    return this.gateways.find({ where: { organizationId }, order: { name: 'ASC' } });
  }

  /** How many gateways the organization has (its quota). */
  countForOrganization(organizationId: string, manager?: EntityManager): Promise<number> {
    return this.connection.getRepository(McpGatewayEntity, manager).count({ where: { organizationId } });
  }

  save(gateway: McpGatewayEntity, manager?: EntityManager): Promise<McpGatewayEntity> {
    return this.connection.getRepository(McpGatewayEntity, manager).save(gateway);
  }

  async deleteForOrganization(
    organizationId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<boolean> {
    const result = await this.connection
      .getRepository(McpGatewayEntity, manager)
      .delete({ organizationId, name });
    return (result.affected ?? 0) > 0;
  }

  /** `apply --prune`: the organization's gateways not named in `keep`. */
  deleteExcept(
    organizationId: string,
    keep: readonly string[],
    manager: EntityManager,
  ): Promise<DeletedRow[]> {
    return deleteExcept(manager, McpGatewayEntity, { organization_id: organizationId }, keep);
  }
}
