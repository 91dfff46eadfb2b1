import type { INestApplicationContext } from '@nestjs/common';
import {
  AdminUsageError,
  parseWholeNumber,
  stringOption,
  type AdminCommand,
  type CommandContext,
  type CommandOutput,
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

/** The organization `--org` names (ORGANIZATION_OPTION), or a clear error. */
export function organizationOf({
  app,
  options,
}: Pick<CommandContext, 'app' | 'options'>): Promise<OrganizationEntity> {
  return requireOrganization(app, stringOption(options, 'org') ?? '');
}

/** `<things> list --org`: the organization's rows, as JSON views and as a table. */
export function organizationListCommand<Row>(spec: {
  words: readonly string[];
  summary: string;
  list: (app: INestApplicationContext, organizationId: string) => Promise<Row[]>;
  view: (row: Row) => unknown;
  columns: readonly string[];
  cells: (row: Row) => string[];
}): AdminCommand {
  return {
    words: spec.words,
    summary: spec.summary,
    options: { ...ORGANIZATION_OPTION },
    async run(context) {
      const organization = await organizationOf(context);
      const rows = await spec.list(context.app, organization.id);
      return { json: rows.map(spec.view), text: table(spec.columns, rows.map(spec.cells)) };
    },
  };
}

/**
 * `<things> <verb> <ref> --org`: the commands on one row of the organization `--org` names, the
 * row their one argument names. `find` returns the row or throws AdminUsageError; `run` gets the
 * row, the context and the organization.
 */
export function organizationRowCommand<Row>(
  arg: string,
  find: (organization: OrganizationEntity, ref: string, app: INestApplicationContext) => Promise<Row>,
) {
  return (
    spec: Omit<AdminCommand, 'args' | 'run'> & {
      run(
        row: Row,
        context: CommandContext,
        organization: OrganizationEntity,
      ): CommandOutput | Promise<CommandOutput>;
    },
  ): AdminCommand => ({
    ...spec,
    args: [arg],
    options: { ...ORGANIZATION_OPTION, ...spec.options },
    async run(context) {
      const organization = await organizationOf(context);
      return spec.run(await find(organization, context.args[0], context.app), context, organization);
    },
  });
}

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
  organizationSetter(
    'set-rate-limit',
    'set requests per minute, or "default" for the configured default',
    '<n|default>',
    (organizations, id, limit) =>
      organizations.setRateLimit(id, limit === 'default' ? null : parseWholeNumber(limit, 'the rate limit')),
  ),
  organizationSetter(
    'set-token-budget',
    'set the tokens (input + output) per UTC month, or "none"',
    '<n|none>',
    (organizations, id, budget) =>
      organizations.setMonthlyTokenBudget(
        id,
        budget === 'none' ? null : parseWholeNumber(budget, 'the token budget'),
      ),
  ),
  organizationSetter(
    'grant-secrets',
    'set the environment variables (comma-separated) the organization\'s admin may reference, or "none"',
    '<NAME,...|none>',
    (organizations, id, names) => organizations.setSecretEnvGrants(id, listArgument(names)),
  ),
  organizationSetter(
    'set-ssrf-allowlist',
    'set the non-public hosts (comma-separated CIDRs, addresses, names, host:port) the organization may reach, or "none"',
    '<entry,...|none>',
    (organizations, id, entries) => organizations.setSsrfAllowlist(id, listArgument(entries)),
  ),
];

/** `orgs <verb> <slug|id> <value>`: sets one thing and shows the organization as it is now. */
function organizationSetter(
  verb: string,
  summary: string,
  valueArg: string,
  set: (organizations: OrganizationsService, organizationId: string, value: string) => Promise<void>,
): AdminCommand {
  return {
    words: ['orgs', verb],
    summary,
    args: ['<slug|id>', valueArg],
    async run({ app, args }) {
      const [slugOrId, value] = args;
      const organization = await requireOrganization(app, slugOrId);
      await set(app.get(OrganizationsService), organization.id, value);
      const updated = await requireOrganization(app, organization.id);
      return { json: organizationView(updated), text: `Updated organization ${describe(updated)}` };
    },
  };
}

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
