import type { EntityManager, EntityTarget, FindOptionsWhere, ObjectLiteral, Repository } from 'typeorm';
import { deleteExcept, type DeletedRow } from './delete-except.js';
import type { TransactionalConnection } from './transactional-connection.js';

/**
 * The queries every table of named rows owned by an organization has alike (assistants, tools,
 * gateways): each takes the tenant, and `manager` joins a caller's transaction.
 */
export abstract class OrganizationRowsRepository<Entity extends ObjectLiteral & { organizationId: string }> {
  protected constructor(
    protected readonly connection: TransactionalConnection,
    private readonly entity: EntityTarget<Entity>,
  ) {}

  /** The table's repository, inside `manager`'s transaction when given. */
  protected rows(manager?: EntityManager): Repository<Entity> {
    return this.connection.getRepository(this.entity, manager);
  }

  /** How many rows the organization has (its quota). */
  countForOrganization(organizationId: string, manager?: EntityManager): Promise<number> {
    return this.rows(manager).count({ where: { organizationId } as FindOptionsWhere<Entity> });
  }

  save(row: Entity, manager?: EntityManager): Promise<Entity> {
    return this.rows(manager).save(row);
  }

  /** `apply --prune`: the organization's rows not named in `keep`, deleted in one statement. */
  deleteExcept(
    organizationId: string,
    keep: readonly string[],
    manager: EntityManager,
  ): Promise<DeletedRow[]> {
    return deleteExcept(manager, this.entity, { organization_id: organizationId }, keep);
  }
}
