import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
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

  listForOrganization(organizationId: string): Promise<AssistantEntity[]> {
    return this.assistants.find({ where: { organizationId }, order: { createdAt: 'ASC' } });
  }

  save(assistant: AssistantEntity): Promise<AssistantEntity> {
    return this.assistants.save(assistant);
  }
}
