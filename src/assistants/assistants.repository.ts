import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { AssistantEntity } from './entities/assistant.entity.js';

@Injectable()
export class AssistantsRepository {
  private readonly assistants: Repository<AssistantEntity>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.assistants = dataSource.getRepository(AssistantEntity);
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
    return this.using(manager).find({ where: { organizationId, name }, order: { createdAt: 'ASC' } });
  }

  listForOrganization(organizationId: string): Promise<AssistantEntity[]> {
    return this.assistants.find({ where: { organizationId }, order: { createdAt: 'ASC' } });
  }

  save(assistant: AssistantEntity, manager?: EntityManager): Promise<AssistantEntity> {
    return this.using(manager).save(assistant);
  }

  private using(manager: EntityManager | undefined): Repository<AssistantEntity> {
    return manager ? manager.getRepository(AssistantEntity) : this.assistants;
  }
}
