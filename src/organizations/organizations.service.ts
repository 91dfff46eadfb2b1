import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { parseSsrfAllowlist } from '../config/app-config.js';
import { isServiceVariable } from '../config/service-environment.js';
import { OrganizationEntity } from './entities/organization.entity.js';
import { OrganizationsRepository } from './organizations.repository.js';
import { embeddingsSettingsProblem, type EmbeddingsSettings } from './embeddings-settings.js';

export class OrganizationInputError extends Error {}

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_LIST_ENTRIES = 100;

/**
 * The organization fields only the platform sets (the CLI, a platform administrator's token): an
 * organization's admin key is refused (403 insufficient_scope, naming the field) for each of
 * them, on every path (PUT, `apply`, with a value or null). The one list every check reads.
 */
export const PLATFORM_ONLY_FIELDS = [
  'rateLimitPerMinute',
  'monthlyTokenBudget',
  'secretEnvGrants',
  'ssrfAllowlist',
  'embeddings',
] as const;

export interface OrganizationDeclaration {
  slug: string;
  /** Omitted: the slug for a new organization, unchanged for an existing one. */
  name?: string;
  /** Omitted: unchanged; null: the configured default. */
  rateLimitPerMinute?: number | null;
  /** Tokens per UTC month. Omitted: unchanged; null: no budget. */
  monthlyTokenBudget?: number | null;
  /** Environment variables its admin may reference. Omitted: unchanged; null: none. */
  secretEnvGrants?: string[] | null;
  /** Non-public hosts its configuration may reach. Omitted: unchanged; null: none. */
  ssrfAllowlist?: string[] | null;
  /** Its embedder (docs/knowledge.md). Omitted: unchanged; null: the local embedder. */
  embeddings?: EmbeddingsSettings | null;
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
    const secretEnvGrants =
      input.secretEnvGrants === undefined ? existing.secretEnvGrants : (input.secretEnvGrants ?? []);
    const ssrfAllowlist =
      input.ssrfAllowlist === undefined ? existing.ssrfAllowlist : (input.ssrfAllowlist ?? []);
    const embeddings = input.embeddings === undefined ? existing.embeddings : input.embeddings;
    if (
      JSON.stringify(embeddings) === JSON.stringify(existing.embeddings) &&
      name === existing.name &&
      rateLimitPerMinute === existing.rateLimitPerMinute &&
      monthlyTokenBudget === existing.monthlyTokenBudget &&
      sameList(secretEnvGrants, existing.secretEnvGrants) &&
      sameList(ssrfAllowlist, existing.ssrfAllowlist)
    ) {
      return { organization: existing, action: 'unchanged' };
    }
    Object.assign(existing, {
      name,
      rateLimitPerMinute,
      monthlyTokenBudget,
      secretEnvGrants,
      ssrfAllowlist,
      embeddings,
    });
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

  findById(id: string, manager?: EntityManager): Promise<OrganizationEntity | null> {
    return this.repository.findById(id, manager);
  }

  /**
   * Finds by id or by slug, as administrators type either. A UUID is only ever an id: slugs
   * shaped like one are refused, and one written before that rule cannot shadow an id.
   */
  async find(slugOrId: string): Promise<OrganizationEntity | null> {
    return isUuid(slugOrId)
      ? this.repository.findById(slugOrId.toLowerCase())
      : this.repository.findBySlug(slugOrId);
  }

  /** Sets the environment variables the organization's admin may reference (platform only). */
  async setSecretEnvGrants(id: string, names: string[]): Promise<void> {
    validateGrants(names);
    await this.repository.update(id, { secretEnvGrants: [...new Set(names)] });
  }

  /** Sets the non-public hosts the organization's configuration may reach (platform only). */
  async setSsrfAllowlist(id: string, entries: string[]): Promise<void> {
    validateAllowlist(entries);
    await this.repository.update(id, { ssrfAllowlist: [...new Set(entries)] });
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
    secretEnvGrants: [...new Set(input.secretEnvGrants ?? [])],
    ssrfAllowlist: [...new Set(input.ssrfAllowlist ?? [])],
    embeddings: input.embeddings ?? null,
  });
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

function validateDeclaration(input: OrganizationDeclaration): void {
  if (!SLUG.test(input.slug)) {
    throw new OrganizationInputError('slug must be 1-63 lowercase letters, digits or dashes');
  }
  // An organization is named by slug or id: a slug shaped like an id could pass for another.
  if (isUuid(input.slug)) throw new OrganizationInputError('slug must not be shaped like an id (a UUID)');
  if (input.name !== undefined && (input.name.trim().length === 0 || input.name.length > 200)) {
    throw new OrganizationInputError('name must be 1-200 characters');
  }
  validateRateLimit(input.rateLimitPerMinute ?? null);
  validateTokenBudget(input.monthlyTokenBudget ?? null);
  validateGrants(input.secretEnvGrants ?? []);
  validateAllowlist(input.ssrfAllowlist ?? []);
  const embeddingsProblem =
    input.embeddings === undefined || input.embeddings === null
      ? null
      : embeddingsSettingsProblem(input.embeddings);
  if (embeddingsProblem) throw new OrganizationInputError(embeddingsProblem);
  if (input.embeddings?.apiKeyEnv && isServiceVariable(input.embeddings.apiKeyEnv)) {
    throw new OrganizationInputError(
      `embeddings.apiKeyEnv: "${input.embeddings.apiKeyEnv}" is one of the service's own variables`,
    );
  }
}

function validateGrants(names: unknown): void {
  if (!Array.isArray(names) || names.length > MAX_LIST_ENTRIES) {
    throw new OrganizationInputError(
      `secretEnvGrants must be a list of at most ${MAX_LIST_ENTRIES} variable names`,
    );
  }
  for (const name of names) {
    if (typeof name !== 'string' || !ENV_NAME.test(name)) {
      throw new OrganizationInputError('secretEnvGrants entries must be environment variable names');
    }
    if (isServiceVariable(name)) {
      throw new OrganizationInputError(
        `secretEnvGrants: "${name}" is one of the service's own variables, which cannot be granted`,
      );
    }
  }
}

function validateAllowlist(entries: unknown): void {
  if (!Array.isArray(entries) || entries.length > MAX_LIST_ENTRIES) {
    throw new OrganizationInputError(`ssrfAllowlist must be a list of at most ${MAX_LIST_ENTRIES} entries`);
  }
  if (!entries.every((entry) => typeof entry === 'string')) {
    throw new OrganizationInputError('ssrfAllowlist entries must be strings');
  }
  try {
    parseSsrfAllowlist(entries);
  } catch (error) {
    throw new OrganizationInputError(`ssrfAllowlist ${(error as Error).message}`);
  }
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
