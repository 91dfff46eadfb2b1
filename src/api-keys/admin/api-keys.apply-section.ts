import { Inject } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  ApplyError,
  assertUnique,
  entriesAt,
  optionalStringList,
  requiredString,
  type ApplyDocument,
  type DocumentEntry,
} from '../../admin-framework/apply/apply-document.js';
import type { ApplyReport } from '../../admin-framework/apply/apply-report.js';
import { ApplySectionProvider, claimKeys } from '../../admin-framework/apply/apply-section.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import {
  OrganizationApplySection,
  type OrganizationInFile,
} from '../../organizations/admin/organization-apply-section.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { hashApiKey } from '../api-key-format.js';
import { ApiKeyInputError, ApiKeysService } from '../api-keys.service.js';

/**
 * `organizations[].apiKeys: [{name, scopes, keyFromEnv}]`: keys declared by reference. The key
 * is read from the named environment variable (in Kubernetes, a Secret mapped into the apply
 * Job) and only its SHA-256 is stored, so no key is ever written in the document or in values.
 * Matched by the key itself: renaming or changing scopes updates the key in place.
 */
@ApplySectionProvider()
export class ApiKeysApplySection extends OrganizationApplySection {
  readonly name = 'apiKeys';
  /** After the organizations (100); nothing refers to keys. */
  readonly order = 150;
  readonly keys = claimKeys('organizations[].apiKeys', ['name', 'scopes', 'keyFromEnv']);
  protected readonly inputErrors = [ApiKeyInputError];
  protected readonly lists = ['apiKeys'];

  constructor(
    organizations: OrganizationsService,
    private readonly apiKeys: ApiKeysService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super(organizations);
  }

  protected async applyTo(target: OrganizationInFile): Promise<void> {
    const entries = entriesAt(target.entry, 'apiKeys');
    assertUnique(entries, 'name', (entry) => requiredString(entry, 'name'));
    assertUnique(entries, 'keyFromEnv', (entry) => requiredString(entry, 'keyFromEnv'));
    await this.writeEach(target, entries, 'api key', (entry) =>
      this.apiKeys
        .declareByHash(
          target.organization.id,
          {
            name: requiredString(entry, 'name'),
            key: this.keyOf(entry),
            scopes: optionalStringList(entry, 'scopes') ?? [],
          },
          target.manager,
        )
        .then(({ key, action }) => ({ row: key, action })),
    );
  }

  async prune(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    await this.pruneLists(document, manager, report, [
      {
        list: 'apiKeys',
        kind: 'api key',
        keep: (declared) => declared.map((entry) => hashApiKey(this.keyOf(entry))),
        remove: (...args) => this.apiKeys.revokeUndeclared(...args),
      },
    ]);
  }

  /** The key from the environment variable the entry names; its value never appears in a message. */
  private keyOf(entry: DocumentEntry): string {
    const variable = requiredString(entry, 'keyFromEnv');
    const key = this.config.upstream.keyEnvironment[variable]?.trim();
    if (!key)
      throw new ApplyError(`${entry.path}.keyFromEnv: the environment variable ${variable} is not set`);
    return key;
  }
}
