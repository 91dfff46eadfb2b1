import {
  assertUnique,
  entriesAt,
  optionalString,
  optionalStringList,
  requiredString,
  type DocumentEntry,
} from '../../admin-framework/apply/apply-document.js';
import { ApplySectionProvider, claimKeys } from '../../admin-framework/apply/apply-section.js';
import {
  declaredNames,
  OrganizationApplySection,
  type OrganizationInFile,
} from '../../organizations/admin/organization-apply-section.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { AssistantInputError, AssistantsService } from '../assistants.service.js';
import type { ApplyDocument } from '../../admin-framework/apply/apply-document.js';
import type { ApplyReport } from '../../admin-framework/apply/apply-report.js';
import type { EntityManager } from 'typeorm';

/**
 * `organizations[].assistants: [{name, instructions, model, tools}]`, matched by name within the
 * organization. Omitted fields keep their current value (a new assistant gets the offline model
 * and no tools); `tools` replaces the whole list of the generic path's server-side tools.
 */
@ApplySectionProvider()
export class AssistantsApplySection extends OrganizationApplySection {
  readonly name = 'assistants';
  readonly order = 200;
  readonly keys = claimKeys('organizations[].assistants', ['name', 'instructions', 'model', 'tools']);
  protected readonly inputErrors = [AssistantInputError];

  constructor(
    organizations: OrganizationsService,
    private readonly assistants: AssistantsService,
  ) {
    super(organizations);
  }

  protected declares(organizationEntry: DocumentEntry): boolean {
    return entriesAt(organizationEntry, 'assistants').length > 0;
  }

  protected async applyTo(target: OrganizationInFile): Promise<void> {
    const { entry: organizationEntry, slug, organization, manager, report } = target;
    const entries = entriesAt(organizationEntry, 'assistants');
    assertUnique(entries, 'name', (entry) => requiredString(entry, 'name').trim());
    for (const entry of entries) {
      const name = requiredString(entry, 'name');
      const { assistant, action } = await this.inEntry(entry, () =>
        this.assistants.upsertByName(
          organization.id,
          {
            name,
            instructions: optionalString(entry, 'instructions'),
            model: entry.value.model,
            tools: optionalStringList(entry, 'tools'),
          },
          manager,
        ),
      );
      report.record({ kind: 'assistant', key: `${slug}/${assistant.name}`, id: assistant.id, action });
    }
  }

  async prune(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    await this.eachStatedList(
      document,
      'assistants',
      manager,
      report,
      async ({ slug, organization }, declared) => {
        for (const deleted of await this.assistants.pruneExcept(
          organization.id,
          declaredNames(declared),
          manager,
        )) {
          report.record({
            kind: 'assistant',
            key: `${slug}/${deleted.name}`,
            id: deleted.id,
            action: 'deleted',
          });
        }
      },
    );
  }
}
