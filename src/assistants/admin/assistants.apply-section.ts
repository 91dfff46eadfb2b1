import {
  assertUnique,
  entriesAt,
  optionalString,
  optionalStringList,
  requiredString,
} from '../../admin-framework/apply/apply-document.js';
import { ApplySectionProvider, claimKeys } from '../../admin-framework/apply/apply-section.js';
import {
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
  protected readonly lists = ['assistants'];

  constructor(
    organizations: OrganizationsService,
    private readonly assistants: AssistantsService,
  ) {
    super(organizations);
  }

  protected async applyTo(target: OrganizationInFile): Promise<void> {
    const entries = entriesAt(target.entry, 'assistants');
    assertUnique(entries, 'name', (entry) => requiredString(entry, 'name').trim());
    await this.writeEach(target, entries, 'assistant', (entry) =>
      this.assistants
        .upsertByName(
          target.organization.id,
          {
            name: requiredString(entry, 'name'),
            instructions: optionalString(entry, 'instructions'),
            model: entry.value.model,
            tools: optionalStringList(entry, 'tools'),
          },
          target.manager,
        )
        .then(({ assistant, action }) => ({ row: assistant, action })),
    );
  }

  async prune(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    await this.pruneLists(document, manager, report, [
      { list: 'assistants', kind: 'assistant', remove: (...args) => this.assistants.pruneExcept(...args) },
    ]);
  }
}
