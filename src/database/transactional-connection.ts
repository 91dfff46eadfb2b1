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
/** The work a transaction's commit waits for (`afterCommit`), by the manager of that transaction. */
const committing = new WeakMap<EntityManager, (() => void)[]>();

/**
 * Runs `then` once `manager`'s transaction (`withTransaction`) has committed, or at once outside
 * one. A cache in front of a row a transaction changes forgets it after the commit too: a miss
 * between an early forget and the commit reads the old row on another connection and keeps it.
 */
export function afterCommit(manager: EntityManager | undefined, then: () => void): void {
  const waiting = manager && committing.get(manager);
  if (waiting) waiting.push(then);
  else then();
}

@Injectable()
export class TransactionalConnection {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  async withTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const committed: (() => void)[] = [];
    const value = await this.dataSource.transaction((manager) => {
      committing.set(manager, committed);
      return work(manager);
    });
    for (const then of committed) then();
    return value;
  }

  /** The entity's repository, inside `manager`'s transaction when one is given. */
  getRepository<Entity extends ObjectLiteral>(
    entity: EntityTarget<Entity>,
    manager?: EntityManager,
  ): Repository<Entity> {
    return (manager ?? this.dataSource.manager).getRepository(entity);
  }
}
