import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { OrganizationEntity } from './entities/organization.entity.js';
import { OrganizationsRepository } from './organizations.repository.js';

export class OrganizationInputError extends Error {}

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

@Injectable()
export class OrganizationsService {
  constructor(private readonly repository: OrganizationsRepository) {}

  async create(input: {
    slug: string;
    name?: string;
    rateLimitPerMinute?: number | null;
  }): Promise<OrganizationEntity> {
    if (!SLUG.test(input.slug)) {
      throw new OrganizationInputError('slug must be 1-63 lowercase letters, digits or dashes');
    }
    if (await this.repository.findBySlug(input.slug)) {
      throw new OrganizationInputError(`organization "${input.slug}" already exists`);
    }
    validateRateLimit(input.rateLimitPerMinute ?? null);
    return this.repository.save(
      Object.assign(new OrganizationEntity(), {
        id: randomUUID(),
        slug: input.slug,
        name: input.name ?? input.slug,
        rateLimitPerMinute: input.rateLimitPerMinute ?? null,
      }),
    );
  }

  count(): Promise<number> {
    return this.repository.count();
  }

  list(): Promise<OrganizationEntity[]> {
    return this.repository.list();
  }

  /** Finds by slug or by id, as administrators type either. */
  async find(slugOrId: string): Promise<OrganizationEntity | null> {
    return (
      (await this.repository.findBySlug(slugOrId)) ??
      (isUuid(slugOrId) ? this.repository.findById(slugOrId) : null)
    );
  }

  async setRateLimit(id: string, perMinute: number | null): Promise<void> {
    validateRateLimit(perMinute);
    await this.repository.setRateLimit(id, perMinute);
  }
}

function validateRateLimit(perMinute: number | null): void {
  if (perMinute !== null && (!Number.isInteger(perMinute) || perMinute < 1)) {
    throw new OrganizationInputError('rate limit must be a positive whole number of requests per minute');
  }
}

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
