import type { EntityManager } from 'typeorm';
import {
  assertUnique,
  entriesAt,
  optionalNullableInteger,
  optionalString,
  optionalStringList,
  requiredString,
  rootEntry,
  type ApplyDocument,
  type DocumentEntry,
} from '../../admin-framework/apply/apply-document.js';
import type { ApplyReport } from '../../admin-framework/apply/apply-report.js';
import {
  ApplySectionBase,
  ApplySectionProvider,
  claimKeys,
} from '../../admin-framework/apply/apply-section.js';
import {
  OrganizationInputError,
  OrganizationsService,
  PLATFORM_ONLY_FIELDS,
} from '../organizations.service.js';
import type { EmbeddingsSettings } from '../embeddings-settings.js';

/**
 * `organizations: [{slug, name, rateLimitPerMinute, monthlyTokenBudget, secretEnvGrants,
 * ssrfAllowlist, embeddings}]`, matched by slug (the admin API refuses the platform-only fields for
 * organization callers before this runs).
 */
@ApplySectionProvider()
export class OrganizationsApplySection extends ApplySectionBase {
  readonly name = 'organizations';
  readonly order = 100;
  readonly keys = claimKeys('organizations', ['slug', 'name', ...PLATFORM_ONLY_FIELDS]);
  protected readonly inputErrors = [OrganizationInputError];

  constructor(private readonly organizations: OrganizationsService) {
    super();
  }

  async apply(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    const entries = entriesAt(rootEntry(document), 'organizations');
    assertUnique(entries, 'slug', (entry) => requiredString(entry, 'slug'));
    for (const entry of entries) {
      const slug = requiredString(entry, 'slug');
      const { organization, action } = await this.inEntry(entry, () =>
        this.organizations.upsertBySlug(
          {
            slug,
            name: optionalString(entry, 'name'),
            rateLimitPerMinute: optionalNullableInteger(entry, 'rateLimitPerMinute'),
            monthlyTokenBudget: optionalNullableInteger(entry, 'monthlyTokenBudget'),
            secretEnvGrants: nullableList(entry, 'secretEnvGrants'),
            ssrfAllowlist: nullableList(entry, 'ssrfAllowlist'),
            // Checked by the service (embeddingsSettingsProblem), which names the bad field.
            embeddings: entry.value.embeddings as EmbeddingsSettings | null | undefined,
          },
          manager,
        ),
      );
      report.record({ kind: 'organization', key: slug, id: organization.id, action });
    }
  }
}

/** A list of strings; null clears it, absent leaves it. */
function nullableList(entry: DocumentEntry, key: string): string[] | null | undefined {
  return entry.value[key] === null ? null : optionalStringList(entry, key);
}
