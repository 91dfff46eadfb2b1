import {
  ApplyError,
  assertUnique,
  entriesAt,
  optionalString,
  optionalStringList,
  requiredString,
  type DocumentEntry,
} from '../../admin-framework/apply/apply-document.js';
import { ApplySectionProvider, claimKeys } from '../../admin-framework/apply/apply-section.js';
import { AssistantInputError, AssistantsService } from '../../assistants/assistants.service.js';
import {
  OrganizationApplySection,
  recordDeleted,
  type OrganizationInFile,
} from '../../organizations/admin/organization-apply-section.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { SpecialistInputError, SpecialistsService } from '../specialists.service.js';
import type { ApplyDocument } from '../../admin-framework/apply/apply-document.js';
import type { ApplyReport } from '../../admin-framework/apply/apply-report.js';
import type { EntityManager } from 'typeorm';

/**
 * `organizations[].assistants[].specialists: [{name, role, instructions, model, tools}]`, matched
 * by name within the assistant. Omitted fields keep their current value; a new specialist needs a
 * role, and uses the assistant's model unless it declares one (`model: null` goes back to it).
 */
@ApplySectionProvider()
export class SpecialistsApplySection extends OrganizationApplySection {
  readonly name = 'specialists';
  /** After the assistants (200) they belong to. */
  readonly order = 300;
  readonly keys = claimKeys('organizations[].assistants[].specialists', [
    'name',
    'role',
    'instructions',
    'model',
    'tools',
  ]);
  protected readonly inputErrors = [SpecialistInputError, AssistantInputError];
  protected readonly lists = ['assistants'];

  constructor(
    organizations: OrganizationsService,
    private readonly assistants: AssistantsService,
    private readonly specialists: SpecialistsService,
  ) {
    super(organizations);
  }

  protected override declares(organizationEntry: DocumentEntry): boolean {
    return assistantsWithSpecialists(organizationEntry).length > 0;
  }

  protected async applyTo(target: OrganizationInFile): Promise<void> {
    const { entry: organizationEntry, slug, organization, manager } = target;
    for (const assistantEntry of assistantsWithSpecialists(organizationEntry)) {
      const entries = entriesAt(assistantEntry, 'specialists');
      const assistantName = requiredString(assistantEntry, 'name');
      // The assistants section (a lower order) created or updated it in this transaction.
      const assistant = await this.inEntry(assistantEntry, () =>
        this.assistants.findUniqueByName(organization.id, assistantName, manager),
      );
      if (!assistant) throw new ApplyError(`${assistantEntry.path}: assistant "${assistantName}" not found`);
      assertUnique(entries, 'name', (entry) => requiredString(entry, 'name'));
      const keyPrefix = `${slug}/${assistant.name}`;
      await this.writeEach(
        target,
        entries,
        'specialist',
        (entry) =>
          this.specialists
            .upsert(
              organization.id,
              assistant.id,
              {
                name: requiredString(entry, 'name'),
                role: optionalString(entry, 'role'),
                instructions: optionalString(entry, 'instructions'),
                model: entry.value.model,
                tools: optionalStringList(entry, 'tools'),
              },
              manager,
            )
            .then(({ specialist, action }) => ({ row: specialist, action })),
        keyPrefix,
      );
    }
  }

  async prune(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    await this.eachStatedList(
      document,
      'assistants',
      manager,
      report,
      async ({ entry, slug, organization }) => {
        for (const assistantEntry of entriesAt(entry, 'assistants')) {
          if (!('specialists' in assistantEntry.value)) continue;
          const assistantName = requiredString(assistantEntry, 'name');
          const assistant = await this.assistants.findUniqueByName(organization.id, assistantName, manager);
          if (!assistant) continue;
          const declared = entriesAt(assistantEntry, 'specialists').map((item) =>
            requiredString(item, 'name'),
          );
          recordDeleted(
            report,
            'specialist',
            `${slug}/${assistant.name}`,
            await this.specialists.pruneExcept(organization.id, assistant.id, declared, manager),
          );
        }
      },
    );
  }
}

function assistantsWithSpecialists(organizationEntry: DocumentEntry): DocumentEntry[] {
  return entriesAt(organizationEntry, 'assistants').filter(
    (entry) => entriesAt(entry, 'specialists').length > 0,
  );
}
