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
   * The request-path lookup: by name across organizations, because the gateway URL carries only
   * the name; the row names its organization, whose slug the caller's token must match.
   */
  findByNameWithOrganization(name: string): Promise<McpGatewayEntity | null> {
    return this.gateways.findOne({ where: { name }, relations: { organization: true } });
  }

  /** Any organization's gateway of this name: names are unique across organizations. */
  findByName(name: string, manager?: EntityManager): Promise<McpGatewayEntity | null> {
    return this.connection.getRepository(McpGatewayEntity, manager).findOne({ where: { name } });
  }

  findForOrganization(organizationId: string, name: string): Promise<McpGatewayEntity | null> {
    return this.gateways.findOne({ where: { organizationId, name } });
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

  async deleteForOrganization(organizationId: string, name: string): Promise<boolean> {
    const result = await this.gateways.delete({ organizationId, name });
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
