import type { INestApplicationContext } from '@nestjs/common';
import {
  AdminUsageError,
  parseWholeNumber,
  stringOption,
  type AdminCommand,
} from '../../admin-framework/admin-command.js';
import { table } from '../../admin-framework/admin-views.js';
import type { OrganizationEntity } from '../entities/organization.entity.js';
import { OrganizationsService } from '../organizations.service.js';

/** The organization an administrator names by slug or id, or a clear error. */
export async function requireOrganization(
  app: INestApplicationContext,
  slugOrId: string,
): Promise<OrganizationEntity> {
  const organization = await app.get(OrganizationsService).find(slugOrId);
  if (!organization) throw new AdminUsageError(`organization "${slugOrId}" not found`);
  return organization;
}

export const ORGANIZATION_OPTION = {
  org: { type: 'string', placeholder: '<slug|id>', required: true, description: 'the organization' },
} as const;

function describe(organization: OrganizationEntity): string {
  const grants = organization.secretEnvGrants?.length ? organization.secretEnvGrants.join(',') : 'none';
  const allowlist = organization.ssrfAllowlist?.length ? organization.ssrfAllowlist.join(',') : 'none';
  return `${organization.slug} (${organization.name}), id ${organization.id}, rate limit ${rateLimitText(organization.rateLimitPerMinute)}, token budget ${budgetText(organization.monthlyTokenBudget)}, secret grants ${grants}, SSRF allowlist ${allowlist}`;
}

export const organizationCommands: AdminCommand[] = [
  {
    words: ['orgs', 'create'],
    summary: 'create an organization',
    options: {
      slug: { type: 'string', placeholder: '<slug>', required: true, description: 'lowercase handle' },
      name: { type: 'string', placeholder: '<name>', description: 'display name (default: the slug)' },
      'rate-limit': {
        type: 'string',
        placeholder: '<n>',
        description: 'requests per minute (default: the configured default)',
      },
      'token-budget': {
        type: 'string',
        placeholder: '<n>',
        description: 'tokens (input + output) per UTC month (default: none)',
      },
    },
    async run({ app, options }) {
      const rateLimit = stringOption(options, 'rate-limit');
      const budget = stringOption(options, 'token-budget');
      const organization = await app.get(OrganizationsService).create({
        slug: stringOption(options, 'slug') ?? '',
        name: stringOption(options, 'name'),
        rateLimitPerMinute: rateLimit === undefined ? null : parseWholeNumber(rateLimit, '--rate-limit'),
        monthlyTokenBudget: budget === undefined ? null : parseWholeNumber(budget, '--token-budget'),
      });
      return { json: organizationView(organization), text: `Created organization ${describe(organization)}` };
    },
  },
  {
    words: ['orgs', 'list'],
    summary: 'list organizations',
    async run({ app }) {
      const organizations = await app.get(OrganizationsService).list();
      return {
        json: organizations.map(organizationView),
        text: table(
          ['SLUG', 'ID', 'NAME', 'RATE LIMIT', 'TOKEN BUDGET', 'CREATED'],
          organizations.map((o) => [
            o.slug,
            o.id,
            o.name,
            rateLimitText(o.rateLimitPerMinute),
            budgetText(o.monthlyTokenBudget),
            o.createdAt.toISOString(),
          ]),
        ),
      };
    },
  },
  {
    words: ['orgs', 'set-rate-limit'],
    summary: 'set requests per minute, or "default" for the configured default',
    args: ['<slug|id>', '<n|default>'],
    async run({ app, args }) {
      const [slugOrId, limit] = args;
      const organization = await requireOrganization(app, slugOrId);
      const perMinute = limit === 'default' ? null : parseWholeNumber(limit, 'the rate limit');
      await app.get(OrganizationsService).setRateLimit(organization.id, perMinute);
      const updated = await requireOrganization(app, organization.id);
      return { json: organizationView(updated), text: `Updated organization ${describe(updated)}` };
    },
  },
  {
    words: ['orgs', 'set-token-budget'],
    summary: 'set the tokens (input + output) per UTC month, or "none"',
    args: ['<slug|id>', '<n|none>'],
    async run({ app, args }) {
      const [slugOrId, budget] = args;
      const organization = await requireOrganization(app, slugOrId);
      const tokens = budget === 'none' ? null : parseWholeNumber(budget, 'the token budget');
      await app.get(OrganizationsService).setMonthlyTokenBudget(organization.id, tokens);
      const updated = await requireOrganization(app, organization.id);
      return { json: organizationView(updated), text: `Updated organization ${describe(updated)}` };
    },
  },
  {
    words: ['orgs', 'grant-secrets'],
    summary:
      'set the environment variables (comma-separated) the organization\'s admin may reference, or "none"',
    args: ['<slug|id>', '<NAME,...|none>'],
    async run({ app, args }) {
      const [slugOrId, names] = args;
      const organization = await requireOrganization(app, slugOrId);
      await app.get(OrganizationsService).setSecretEnvGrants(organization.id, listArgument(names));
      const updated = await requireOrganization(app, organization.id);
      return { json: organizationView(updated), text: `Updated organization ${describe(updated)}` };
    },
  },
  {
    words: ['orgs', 'set-ssrf-allowlist'],
    summary:
      'set the non-public hosts (comma-separated CIDRs, addresses, names, host:port) the organization may reach, or "none"',
    args: ['<slug|id>', '<entry,...|none>'],
    async run({ app, args }) {
      const [slugOrId, entries] = args;
      const organization = await requireOrganization(app, slugOrId);
      await app.get(OrganizationsService).setSsrfAllowlist(organization.id, listArgument(entries));
      const updated = await requireOrganization(app, organization.id);
      return { json: organizationView(updated), text: `Updated organization ${describe(updated)}` };
    },
  },
];

function listArgument(value: string): string[] {
  return value === 'none'
    ? []
    : value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
}

/** The `--json` shape, field by field so that a new column is never printed by accident. */
export function organizationView(organization: OrganizationEntity) {
  return {
    id: organization.id,
    slug: organization.slug,
    name: organization.name,
    rateLimitPerMinute: organization.rateLimitPerMinute,
    monthlyTokenBudget: organization.monthlyTokenBudget,
    secretEnvGrants: organization.secretEnvGrants ?? [],
    ssrfAllowlist: organization.ssrfAllowlist ?? [],
    createdAt: organization.createdAt.toISOString(),
  };
}

function rateLimitText(perMinute: number | null): string {
  return perMinute === null ? 'default' : `${perMinute}/min`;
}

function budgetText(tokens: number | null): string {
  return tokens === null ? 'none' : `${tokens} tokens/month`;
}
