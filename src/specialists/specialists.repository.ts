import { Injectable } from '@nestjs/common';
import type { EntityManager, Repository } from 'typeorm';
import { TransactionalConnection } from '../database/transactional-connection.js';
import { SpecialistEntity } from './entities/specialist.entity.js';
import { deleteExcept, type DeletedRow } from '../database/delete-except.js';

@Injectable()
export class SpecialistsRepository {
  private readonly specialists: Repository<SpecialistEntity>;

  constructor(private readonly connection: TransactionalConnection) {
    this.specialists = connection.getRepository(SpecialistEntity);
  }

  listForAssistant(
    organizationId: string,
    assistantId: string,
    manager?: EntityManager,
  ): Promise<SpecialistEntity[]> {
    return this.connection
      .getRepository(SpecialistEntity, manager)
      .find({ where: { organizationId, assistantId }, order: { name: 'ASC' } });
  }

  findByName(
    organizationId: string,
    assistantId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<SpecialistEntity | null> {
    return this.connection
      .getRepository(SpecialistEntity, manager)
      .findOne({ where: { organizationId, assistantId, name } });
  }

  /** How many specialists the organization's assistant has (its quota). */
  countForAssistant(organizationId: string, assistantId: string, manager?: EntityManager): Promise<number> {
    return this.connection
      .getRepository(SpecialistEntity, manager)
      .count({ where: { organizationId, assistantId } });
  }

  save(specialist: SpecialistEntity, manager?: EntityManager): Promise<SpecialistEntity> {
    return this.connection.getRepository(SpecialistEntity, manager).save(specialist);
  }

  async deleteByName(
    organizationId: string,
    assistantId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<boolean> {
    const result = await this.connection
      .getRepository(SpecialistEntity, manager)
      .delete({ organizationId, assistantId, name });
    return (result.affected ?? 0) > 0;
  }

  /** `apply --prune`: the assistant's specialists not named in `keep`. */
  deleteExcept(
    organizationId: string,
    assistantId: string,
    keep: readonly string[],
    manager: EntityManager,
  ): Promise<DeletedRow[]> {
    return deleteExcept(
      manager,
      SpecialistEntity,
      { organization_id: organizationId, assistant_id: assistantId },
      keep,
    );
  }
}
