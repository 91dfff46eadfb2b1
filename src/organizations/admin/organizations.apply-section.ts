import type { EntityManager } from 'typeorm';
import {
  assertUnique,
  entriesAt,
  optionalNullableInteger,
  optionalString,
  requiredString,
  rootEntry,
  type ApplyDocument,
} from '../../admin-framework/apply/apply-document.js';
import type { ApplyReport } from '../../admin-framework/apply/apply-report.js';
import {
  ApplySectionBase,
  ApplySectionProvider,
  claimKeys,
} from '../../admin-framework/apply/apply-section.js';
import { OrganizationInputError, OrganizationsService } from '../organizations.service.js';

/** `organizations: [{slug, name, rateLimitPerMinute}]`, matched by slug. */
@ApplySectionProvider()
export class OrganizationsApplySection extends ApplySectionBase {
  readonly name = 'organizations';
  readonly order = 100;
  readonly keys = claimKeys('organizations', ['slug', 'name', 'rateLimitPerMinute']);
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
          },
          manager,
        ),
      );
      report.record({ kind: 'organization', key: slug, id: organization.id, action });
    }
  }
}
