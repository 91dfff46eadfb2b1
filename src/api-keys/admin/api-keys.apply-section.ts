import { Inject } from '@nestjs/common';
import {
  ApplyError,
  optionalStringList,
  requiredString,
  type DocumentEntry,
} from '../../admin-framework/apply/apply-document.js';
import { ApplySectionProvider } from '../../admin-framework/apply/apply-section.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { NamedListsSection } from '../../organizations/admin/organization-apply-section.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { hashApiKey } from '../api-key-format.js';
import { ApiKeyInputError, ApiKeysService } from '../api-keys.service.js';

/**
 * `organizations[].apiKeys: [{name, scopes, keyFromEnv}]`: keys declared by reference. The key
 * is read from the named environment variable (in Kubernetes, a Secret mapped into the apply
 * Job) and only its SHA-256 is stored, so no key is ever written in the document or in values.
 * Matched by the key itself: renaming or changing scopes updates the key in place. After the
 * organizations (100); nothing refers to keys.
 */
@ApplySectionProvider()
export class ApiKeysApplySection extends NamedListsSection {
  constructor(
    organizations: OrganizationsService,
    apiKeys: ApiKeysService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    /** The key from the environment variable the entry names; its value never appears in a message. */
    const keyOf = (entry: DocumentEntry): string => {
      const variable = requiredString(entry, 'keyFromEnv');
      const key = config.upstream.keyEnvironment[variable]?.trim();
      if (!key)
        throw new ApplyError(`${entry.path}.keyFromEnv: the environment variable ${variable} is not set`);
      return key;
    };
    super(organizations, {
      name: 'apiKeys',
      order: 150,
      inputErrors: [ApiKeyInputError],
      lists: [
        {
          list: 'apiKeys',
          kind: 'api key',
          fields: ['name', 'scopes', 'keyFromEnv'],
          exactNames: true,
          uniqueAlso: 'keyFromEnv',
          write: async (organizationId, entry, manager) => {
            const declared = {
              name: requiredString(entry, 'name'),
              key: keyOf(entry),
              scopes: optionalStringList(entry, 'scopes') ?? [],
            };
            const { key, action } = await apiKeys.declareByHash(organizationId, declared, manager);
            return { row: key, action };
          },
          keep: (declared) => declared.map((entry) => hashApiKey(keyOf(entry))),
          remove: (...args) => apiKeys.revokeUndeclared(...args),
        },
      ],
    });
  }
}
