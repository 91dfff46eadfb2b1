import { Injectable } from '@nestjs/common';
import type { EntityManager, Repository } from 'typeorm';
import { TransactionalConnection } from '../database/transactional-connection.js';
import { AssistantEntity } from './entities/assistant.entity.js';
import { deleteExcept, type DeletedRow } from '../database/delete-except.js';

@Injectable()
export class AssistantsRepository {
  private readonly assistants: Repository<AssistantEntity>;

  constructor(private readonly connection: TransactionalConnection) {
    this.assistants = connection.getRepository(AssistantEntity);
  }

  /** The tenant is part of the query: another organization's assistant is simply not found. */
  findForOrganization(organizationId: string, id: string): Promise<AssistantEntity | null> {
    return this.assistants.findOne({ where: { id, organizationId } });
  }

  findByNameForOrganization(organizationId: string, name: string): Promise<AssistantEntity | null> {
    return this.assistants.findOne({ where: { name, organizationId } });
  }

  /** Every assistant of the organization with this exact name; `manager` joins a caller's transaction. */
  listByNameForOrganization(
    organizationId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<AssistantEntity[]> {
    return this.connection
      .getRepository(AssistantEntity, manager)
      .find({ where: { organizationId, name }, order: { createdAt: 'ASC' } });
  }

  listForOrganization(organizationId: string): Promise<AssistantEntity[]> {
    return this.assistants.find({ where: { organizationId }, order: { createdAt: 'ASC' } });
  }

  /** How many assistants the organization has (its quota); `manager` joins a caller's transaction. */
  countForOrganization(organizationId: string, manager?: EntityManager): Promise<number> {
    return this.connection.getRepository(AssistantEntity, manager).count({ where: { organizationId } });
  }

  save(assistant: AssistantEntity, manager?: EntityManager): Promise<AssistantEntity> {
    return this.connection.getRepository(AssistantEntity, manager).save(assistant);
  }

  /** `apply --prune`: the organization's assistants not named in `keep` (their history goes with them). */
  deleteExcept(
    organizationId: string,
    keep: readonly string[],
    manager: EntityManager,
  ): Promise<DeletedRow[]> {
    return deleteExcept(manager, AssistantEntity, { organization_id: organizationId }, keep);
  }
}
