import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { OrganizationEntity } from './entities/organization.entity.js';
import { OrganizationsRepository } from './organizations.repository.js';

export class OrganizationInputError extends Error {}

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

export interface OrganizationDeclaration {
  slug: string;
  /** Omitted: the slug for a new organization, unchanged for an existing one. */
  name?: string;
  /** Omitted: unchanged; null: the configured default. */
  rateLimitPerMinute?: number | null;
  /** Tokens per UTC month. Omitted: unchanged; null: no budget. */
  monthlyTokenBudget?: number | null;
}

@Injectable()
export class OrganizationsService {
  constructor(private readonly repository: OrganizationsRepository) {}

  async create(input: OrganizationDeclaration): Promise<OrganizationEntity> {
    validateDeclaration(input);
    if (await this.repository.findBySlug(input.slug)) {
      throw new OrganizationInputError(`organization "${input.slug}" already exists`);
    }
    return this.repository.save(newOrganization(input));
  }

  /**
   * Creates or updates the organization with this slug inside the caller's transaction (the
   * admin `apply`), and says which it did; an organization already as declared is not written.
   */
  async upsertBySlug(
    input: OrganizationDeclaration,
    manager: EntityManager,
  ): Promise<{ organization: OrganizationEntity; action: 'created' | 'updated' | 'unchanged' }> {
    validateDeclaration(input);
    const existing = await this.repository.findBySlug(input.slug, manager);
    if (!existing) {
      return { organization: await this.repository.save(newOrganization(input), manager), action: 'created' };
    }
    const name = input.name ?? existing.name;
    const rateLimitPerMinute =
      input.rateLimitPerMinute === undefined ? existing.rateLimitPerMinute : input.rateLimitPerMinute;
    const monthlyTokenBudget =
      input.monthlyTokenBudget === undefined ? existing.monthlyTokenBudget : input.monthlyTokenBudget;
    if (
      name === existing.name &&
      rateLimitPerMinute === existing.rateLimitPerMinute &&
      monthlyTokenBudget === existing.monthlyTokenBudget
    ) {
      return { organization: existing, action: 'unchanged' };
    }
    Object.assign(existing, { name, rateLimitPerMinute, monthlyTokenBudget });
    return { organization: await this.repository.save(existing, manager), action: 'updated' };
  }

  findBySlug(slug: string, manager?: EntityManager): Promise<OrganizationEntity | null> {
    return this.repository.findBySlug(slug, manager);
  }

  count(): Promise<number> {
    return this.repository.count();
  }

  list(): Promise<OrganizationEntity[]> {
    return this.repository.list();
  }

  findById(id: string): Promise<OrganizationEntity | null> {
    return this.repository.findById(id);
  }

  /** Finds by slug or by id, as administrators type either. */
  async find(slugOrId: string): Promise<OrganizationEntity | null> {
    return (
      (await this.repository.findBySlug(slugOrId)) ??
      (isUuid(slugOrId) ? this.repository.findById(slugOrId) : null)
    );
  }

  async setMonthlyTokenBudget(id: string, tokens: number | null): Promise<void> {
    validateTokenBudget(tokens);
    await this.repository.setMonthlyTokenBudget(id, tokens);
  }

  async setRateLimit(id: string, perMinute: number | null): Promise<void> {
    validateRateLimit(perMinute);
    await this.repository.setRateLimit(id, perMinute);
  }
}

function newOrganization(input: OrganizationDeclaration): OrganizationEntity {
  return Object.assign(new OrganizationEntity(), {
    id: randomUUID(),
    slug: input.slug,
    name: input.name ?? input.slug,
    rateLimitPerMinute: input.rateLimitPerMinute ?? null,
    monthlyTokenBudget: input.monthlyTokenBudget ?? null,
  });
}

function validateDeclaration(input: OrganizationDeclaration): void {
  if (!SLUG.test(input.slug)) {
    throw new OrganizationInputError('slug must be 1-63 lowercase letters, digits or dashes');
  }
  if (input.name !== undefined && (input.name.trim().length === 0 || input.name.length > 200)) {
    throw new OrganizationInputError('name must be 1-200 characters');
  }
  validateRateLimit(input.rateLimitPerMinute ?? null);
  validateTokenBudget(input.monthlyTokenBudget ?? null);
}

function validateTokenBudget(tokens: number | null): void {
  if (tokens !== null && (!Number.isSafeInteger(tokens) || tokens < 1)) {
    throw new OrganizationInputError('monthly token budget must be a positive whole number of tokens');
  }
}

function validateRateLimit(perMinute: number | null): void {
  // The upper bound is the integer column's.
  if (perMinute !== null && (!Number.isInteger(perMinute) || perMinute < 1 || perMinute > 2_147_483_647)) {
    throw new OrganizationInputError('rate limit must be a positive whole number of requests per minute');
  }
}

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
