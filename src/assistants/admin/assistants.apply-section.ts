import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AssistantInputError, AssistantsService } from '../../../assistants/assistants.service.js';
import { OrganizationsService } from '../../../organizations/organizations.service.js';
import {
  ApplyError,
  assertUnique,
  entriesAt,
  optionalString,
  optionalStringList,
  requiredString,
  rootEntry,
  type ApplyDocument,
} from '../apply-document.js';
import type { ApplyReport } from '../apply-report.js';
import { ApplySectionProvider, type ApplySection } from '../apply-section.js';

/**
 * `organizations[].assistants: [{name, instructions, model, tools}]`, matched by name within the
 * organization. Omitted fields keep their current value (a new assistant gets the offline model
 * and no tools); `tools` replaces the whole list of the generic path's server-side tools.
 */
@Injectable()
@ApplySectionProvider()
export class AssistantsApplySection implements ApplySection {
  readonly name = 'assistants';
  readonly order = 200;
  readonly keys = [
    'organizations[].assistants',
    'organizations[].assistants[].name',
    'organizations[].assistants[].instructions',
    'organizations[].assistants[].model',
    'organizations[].assistants[].tools',
  ];

  constructor(
    private readonly organizations: OrganizationsService,
    private readonly assistants: AssistantsService,
  ) {}

  async apply(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    for (const organizationEntry of entriesAt(rootEntry(document), 'organizations')) {
      const entries = entriesAt(organizationEntry, 'assistants');
      if (entries.length === 0) continue;
      const slug = requiredString(organizationEntry, 'slug');
      // The organizations section (a lower order) created it in this transaction.
      const organization = await this.organizations.findBySlug(slug, manager);
      if (!organization) throw new ApplyError(`${organizationEntry.path}: organization "${slug}" not found`);
      assertUnique(entries, 'name', (entry) => requiredString(entry, 'name').trim());
      for (const entry of entries) {
        const name = requiredString(entry, 'name');
        try {
          const { assistant, action } = await this.assistants.upsertByName(
            organization.id,
            {
              name,
              instructions: optionalString(entry, 'instructions'),
              model: entry.value.model,
              tools: optionalStringList(entry, 'tools'),
            },
            manager,
          );
          report.record({ kind: 'assistant', key: `${slug}/${assistant.name}`, id: assistant.id, action });
        } catch (error) {
          if (error instanceof AssistantInputError) throw new ApplyError(`${entry.path}: ${error.message}`);
          throw error;
        }
      }
    }
  }
}
