import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, type EntityTarget, type ObjectLiteral, type Repository } from 'typeorm';

/**
 * The one way into a transaction, passed explicitly (after Vendure's TransactionalConnection):
 * a multi-write operation runs in `withTransaction`, and hands the `EntityManager` it receives
 * to every repository call that must commit or roll back with it. A repository method that can
 * join a caller's transaction takes an optional `manager` and reads its table through
 * `getRepository(entity, manager)`: inside that transaction when given, on the pool otherwise.
 */
@Injectable()
export class TransactionalConnection {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  withTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** The entity's repository, inside `manager`'s transaction when one is given. */
  getRepository<Entity extends ObjectLiteral>(
    entity: EntityTarget<Entity>,
    manager?: EntityManager,
  ): Repository<Entity> {
    return (manager ?? this.dataSource.manager).getRepository(entity);
  }
}
