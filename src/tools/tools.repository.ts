import { Injectable } from '@nestjs/common';
import { In, type EntityManager, type Repository } from 'typeorm';
import { TransactionalConnection } from '../database/transactional-connection.js';
import { PluginEntity } from './entities/plugin.entity.js';
import { ToolEntity } from './entities/tool.entity.js';
import { deleteExcept, type DeletedRow } from '../database/delete-except.js';
import { OrganizationRowsRepository } from '../database/organization-rows.repository.js';

/**
 * Tools (the base's count, save and prune are the tools') and plugins; every query takes the
 * organization. `manager` joins a caller's transaction.
 */
@Injectable()
export class ToolsRepository extends OrganizationRowsRepository<ToolEntity> {
  private readonly tools: Repository<ToolEntity>;
  private readonly plugins: Repository<PluginEntity>;

  constructor(connection: TransactionalConnection) {
    super(connection, ToolEntity);
    this.tools = connection.getRepository(ToolEntity);
    this.plugins = connection.getRepository(PluginEntity);
  }

  /** The named tools with their plugins, in one query. */
  findByNamesWithPlugins(organizationId: string, names: readonly string[]): Promise<ToolEntity[]> {
    if (names.length === 0) return Promise.resolve([]);
    return this.tools.find({
      where: { organizationId, name: In([...names]) },
      relations: { plugin: true },
    });
  }

  listWithPlugins(organizationId: string): Promise<ToolEntity[]> {
    return this.tools.find({
      where: { organizationId },
      relations: { plugin: true },
      order: { name: 'ASC' },
    });
  }

  findByNameWithPlugin(
    organizationId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<ToolEntity | null> {
    return this.rows(manager).findOne({ where: { organizationId, name }, relations: { plugin: true } });
  }

  async deleteByName(organizationId: string, name: string, manager?: EntityManager): Promise<boolean> {
    const result = await this.rows(manager).delete({ organizationId, name });
    return (result.affected ?? 0) > 0;
  }

  findPluginByName(
    organizationId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<PluginEntity | null> {
    return this.connection.getRepository(PluginEntity, manager).findOne({ where: { organizationId, name } });
  }

  listPlugins(organizationId: string): Promise<PluginEntity[]> {
    return this.plugins.find({ where: { organizationId }, order: { name: 'ASC' } });
  }

  savePlugin(plugin: PluginEntity, manager?: EntityManager): Promise<PluginEntity> {
    return this.connection.getRepository(PluginEntity, manager).save(plugin);
  }

  async deletePluginByName(organizationId: string, name: string): Promise<boolean> {
    const result = await this.plugins.delete({ organizationId, name });
    return (result.affected ?? 0) > 0;
  }

  /** `apply --prune`: the organization's plugins not named in `keep` (their tools keep no plugin). */
  deletePluginsExcept(
    organizationId: string,
    keep: readonly string[],
    manager: EntityManager,
  ): Promise<DeletedRow[]> {
    return deleteExcept(manager, PluginEntity, { organization_id: organizationId }, keep);
  }
}
