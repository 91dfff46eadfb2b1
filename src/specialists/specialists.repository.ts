import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { SpecialistEntity } from './entities/specialist.entity.js';

@Injectable()
export class SpecialistsRepository {
  private readonly specialists: Repository<SpecialistEntity>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.specialists = dataSource.getRepository(SpecialistEntity);
  }

  listForAssistant(
    organizationId: string,
    assistantId: string,
    manager?: EntityManager,
  ): Promise<SpecialistEntity[]> {
    return this.using(manager).find({ where: { organizationId, assistantId }, order: { name: 'ASC' } });
  }

  findByName(
    organizationId: string,
    assistantId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<SpecialistEntity | null> {
    return this.using(manager).findOne({ where: { organizationId, assistantId, name } });
  }

  save(specialist: SpecialistEntity, manager?: EntityManager): Promise<SpecialistEntity> {
    return this.using(manager).save(specialist);
  }

  async deleteByName(organizationId: string, assistantId: string, name: string): Promise<boolean> {
    const result = await this.specialists.delete({ organizationId, assistantId, name });
    return (result.affected ?? 0) > 0;
  }

  private using(manager: EntityManager | undefined): Repository<SpecialistEntity> {
    return manager ? manager.getRepository(SpecialistEntity) : this.specialists;
  }
}
