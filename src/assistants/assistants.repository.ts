import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { TransactionalConnection } from '../database/transactional-connection.js';
import { AssistantEntity } from './entities/assistant.entity.js';
import { OrganizationRowsRepository } from '../database/organization-rows.repository.js';

@Injectable()
export class AssistantsRepository extends OrganizationRowsRepository<AssistantEntity> {
  constructor(connection: TransactionalConnection) {
    super(connection, AssistantEntity);
  }

  /** The tenant is part of the query: another organization's assistant is simply not found. */
  findForOrganization(organizationId: string, id: string): Promise<AssistantEntity | null> {
    return this.rows().findOne({ where: { id, organizationId } });
  }

  findByNameForOrganization(organizationId: string, name: string): Promise<AssistantEntity | null> {
    return this.rows().findOne({ where: { name, organizationId } });
  }

  /** Every assistant of the organization with this exact name; `manager` joins a caller's transaction. */
  listByNameForOrganization(
    organizationId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<AssistantEntity[]> {
    return this.rows(manager).find({ where: { organizationId, name }, order: { createdAt: 'ASC' } });
  }

  listForOrganization(organizationId: string): Promise<AssistantEntity[]> {
    return this.rows().find({ where: { organizationId }, order: { createdAt: 'ASC' } });
  }
}
