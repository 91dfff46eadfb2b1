import { AuditLogService } from '../../admin-framework/audit/audit-log.service.js';
import { cliActor } from '../../admin-framework/audit/cli-audit.js';
import { MAX_USER_ID_LENGTH } from '../../common/http/request-params.js';
import { UserErasureService, type ErasureReport } from '../user-erasure.service.js';
import { AdminUsageError, stringOption, type AdminCommand } from '../../admin-framework/admin-command.js';
import { ORGANIZATION_OPTION, organizationOf } from '../../organizations/admin/organizations.commands.js';

const LABELS: Record<keyof ErasureReport, [string, string]> = {
  conversations: ['conversation', 'conversations'],
  responses: ['response', 'responses'],
  messages: ['message', 'messages'],
  claims: ['claim', 'claims'],
  memoryItems: ['memory item', 'memory items'],
  memoryOptOuts: ['memory opt-out', 'memory opt-outs'],
  files: ['file', 'files'],
};

function summary(report: ErasureReport): string {
  return (Object.keys(LABELS) as (keyof ErasureReport)[])
    .map((kind) => `${report[kind]} ${LABELS[kind][report[kind] === 1 ? 0 : 1]}`)
    .join(', ');
}

export const userCommands: AdminCommand[] = [
  {
    words: ['users', 'erase'],
    summary: 'delete every trace of one end-user id in one organization, in one transaction',
    options: {
      ...ORGANIZATION_OPTION,
      user: {
        type: 'string',
        placeholder: '<userId>',
        required: true,
        description: 'the end-user id, exactly as sent in x-user-id',
      },
    },
    async run({ app, options }) {
      const organization = await organizationOf({ app, options });
      const userId = stringOption(options, 'user') ?? '';
      if (userId.length === 0 || userId.length > MAX_USER_ID_LENGTH) {
        throw new AdminUsageError(`--user must be 1 to ${MAX_USER_ID_LENGTH} characters`);
      }
      // Audited as the admin API's erasure is, in the erasure's own transaction.
      const deleted = await app
        .get(UserErasureService)
        .erase(organization.id, userId, (manager, change) =>
          app.get(AuditLogService).record(manager, cliActor(), [change]),
        );
      return {
        json: { organization: { id: organization.id, slug: organization.slug }, userId, deleted },
        text: `Erased user ${JSON.stringify(userId)} in ${organization.slug}: ${summary(deleted)}.`,
      };
    },
  },
];
