import {
  optionalString,
  optionalStringList,
  requiredString,
} from '../../admin-framework/apply/apply-document.js';
import { ApplySectionProvider } from '../../admin-framework/apply/apply-section.js';
import { NamedListsSection } from '../../organizations/admin/organization-apply-section.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { AssistantInputError, AssistantsService } from '../assistants.service.js';

/**
 * `organizations[].assistants: [{name, instructions, model, tools}]`, matched by name within the
 * organization. Omitted fields keep their current value (a new assistant gets the offline model
 * and no tools); `tools` replaces the whole list of the generic path's server-side tools.
 */
@ApplySectionProvider()
export class AssistantsApplySection extends NamedListsSection {
  constructor(organizations: OrganizationsService, assistants: AssistantsService) {
    super(organizations, {
      name: 'assistants',
      order: 200,
      inputErrors: [AssistantInputError],
      lists: [
        {
          list: 'assistants',
          kind: 'assistant',
          fields: ['name', 'instructions', 'model', 'tools'],
          write: async (organizationId, entry, manager) => {
            const { assistant, action } = await assistants.upsertByName(
              organizationId,
              {
                name: requiredString(entry, 'name'),
                instructions: optionalString(entry, 'instructions'),
                model: entry.value.model,
                tools: optionalStringList(entry, 'tools'),
              },
              manager,
            );
            return { row: assistant, action };
          },
          remove: (...args) => assistants.pruneExcept(...args),
        },
      ],
    });
  }
}
