import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';

export interface DeletedRow {
  id: string;
  name: string;
}

/**
 * Deletes the rows of one owner (`scope`: column → value, always the tenant) whose `name` is not
 * in `keep`, and says which: what `apply --prune` removes. One statement, inside the caller's
 * transaction.
 */
export async function deleteExcept<Entity extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<Entity>,
  scope: Readonly<Record<string, string>>,
  keep: readonly string[],
): Promise<DeletedRow[]> {
  const query = manager.createQueryBuilder().delete().from(entity);
  Object.entries(scope).forEach(([column, value], index) =>
    query.andWhere(`"${column}" = :scope${index}`, { [`scope${index}`]: value }),
  );
  const result = await query
    .andWhere('NOT ("name" = ANY(:keep))', { keep: [...keep] })
    .returning(['id', 'name'])
    .execute();
  return (result.raw as DeletedRow[]).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
