import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  OrganizationInputError,
  OrganizationsService,
} from '../../../organizations/organizations.service.js';
import {
  ApplyError,
  assertUnique,
  entriesAt,
  optionalNullableInteger,
  optionalString,
  requiredString,
  rootEntry,
  type ApplyDocument,
} from '../apply-document.js';
import type { ApplyReport } from '../apply-report.js';
import { ApplySectionProvider, type ApplySection } from '../apply-section.js';

/** `organizations: [{slug, name, rateLimitPerMinute}]`, matched by slug. */
@Injectable()
@ApplySectionProvider()
export class OrganizationsApplySection implements ApplySection {
  readonly name = 'organizations';
  readonly order = 100;
  readonly keys = [
    'organizations',
    'organizations[].slug',
    'organizations[].name',
    'organizations[].rateLimitPerMinute',
  ];

  constructor(private readonly organizations: OrganizationsService) {}

  async apply(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    const entries = entriesAt(rootEntry(document), 'organizations');
    assertUnique(entries, 'slug', (entry) => requiredString(entry, 'slug'));
    for (const entry of entries) {
      const slug = requiredString(entry, 'slug');
      try {
        const { organization, action } = await this.organizations.upsertBySlug(
          {
            slug,
            name: optionalString(entry, 'name'),
            rateLimitPerMinute: optionalNullableInteger(entry, 'rateLimitPerMinute'),
          },
          manager,
        );
        report.record({ kind: 'organization', key: slug, id: organization.id, action });
      } catch (error) {
        if (error instanceof OrganizationInputError) throw new ApplyError(`${entry.path}: ${error.message}`);
        throw error;
      }
    }
  }
}
