import {
  AdminUsageError,
  parseId,
  stringOption,
  type AdminCommand,
  type OptionValues,
} from '../../admin-framework/admin-command.js';
import {
  ORGANIZATION_OPTION,
  organizationOf,
  organizationListCommand,
} from '../../organizations/admin/organizations.commands.js';
import { ApiKeysService } from '../api-keys.service.js';
import type { ApiKeyEntity } from '../entities/api-key.entity.js';

const NAME_OPTION = {
  name: { type: 'string', placeholder: '<name>', required: true, description: 'what the key is for' },
} as const;

const SCOPES_OPTION = {
  scopes: {
    type: 'string',
    placeholder: '<scope,...>',
    required: true,
    description: 'comma-separated: full_access, assistant, user',
  },
} as const;

function scopesOf(options: OptionValues): string[] {
  return (stringOption(options, 'scopes') ?? '')
    .split(',')
    .map((scope) => scope.trim())
    .filter((scope) => scope.length > 0);
}

function describe(key: ApiKeyEntity): string {
  return `"${key.name}" (id ${key.id}, ${key.hint}) with scopes ${key.scopes.join(', ')}`;
}

export const keyCommands: AdminCommand[] = [
  {
    words: ['keys', 'create'],
    summary: 'issue a key; its secret is printed this once',
    options: { ...ORGANIZATION_OPTION, ...NAME_OPTION, ...SCOPES_OPTION },
    async run({ app, options }) {
      const organization = await organizationOf({ app, options });
      const { key, secret } = await app
        .get(ApiKeysService)
        .create(organization.id, stringOption(options, 'name') ?? '', scopesOf(options));
      return {
        json: { ...apiKeyView(key), secret },
        text: [
          `Created key ${describe(key)} for ${organization.slug}.`,
          'Secret (shown only this once; store it now):',
          secret,
        ].join('\n'),
      };
    },
  },
  organizationListCommand({
    words: ['keys', 'list'],
    summary: "list an organization's keys (never their secrets)",
    list: (app, organizationId) => app.get(ApiKeysService).list(organizationId),
    view: apiKeyView,
    columns: ['ID', 'NAME', 'HINT', 'SCOPES', 'LEGACY', 'CREATED', 'LAST USED', 'REVOKED'],
    cells: (k) => [
      k.id,
      k.name,
      k.hint,
      k.scopes.join(','),
      k.legacy ? 'yes' : 'no',
      k.createdAt.toISOString(),
      k.lastUsedAt?.toISOString() ?? '-',
      k.revokedAt?.toISOString() ?? '-',
    ],
  }),
  {
    words: ['keys', 'revoke'],
    summary: 'revoke a key; running services stop accepting it within API_KEY_CACHE_TTL_SECONDS',
    args: ['<keyId>'],
    options: { ...ORGANIZATION_OPTION },
    async run({ app, options, args }) {
      const organization = await organizationOf({ app, options });
      const keyId = parseId(args[0], 'the key id');
      const keys = app.get(ApiKeysService);
      if (!(await keys.revoke(organization.id, keyId))) {
        throw new AdminUsageError(`organization ${organization.slug} has no active key ${keyId}`);
      }
      const revoked = await keys.find(organization.id, keyId);
      if (!revoked) throw new AdminUsageError(`key ${keyId} disappeared while being revoked`);
      return {
        json: apiKeyView(revoked),
        text: `Revoked key ${describe(revoked)}. Running services refuse it within API_KEY_CACHE_TTL_SECONDS.`,
      };
    },
  },
  {
    words: ['keys', 'import-legacy'],
    summary: 'import an earlier-format (64 hex) key by its SHA-256; the key itself never travels',
    options: {
      ...ORGANIZATION_OPTION,
      ...NAME_OPTION,
      sha256: {
        type: 'string',
        placeholder: '<64 hex>',
        required: true,
        description: 'SHA-256 of the legacy key, in hex',
      },
      ...SCOPES_OPTION,
    },
    async run({ app, options }) {
      const organization = await organizationOf({ app, options });
      const key = await app
        .get(ApiKeysService)
        .importLegacy(
          organization.id,
          stringOption(options, 'name') ?? '',
          stringOption(options, 'sha256') ?? '',
          scopesOf(options),
        );
      return {
        json: apiKeyView(key),
        text: `Imported legacy key ${describe(key)} for ${organization.slug}.`,
      };
    },
  },
];

/** The `--json` shape, field by field: never the secret nor its hash. */
export function apiKeyView(key: ApiKeyEntity) {
  return {
    id: key.id,
    organizationId: key.organizationId,
    name: key.name,
    hint: key.hint,
    scopes: key.scopes,
    legacy: key.legacy,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}
