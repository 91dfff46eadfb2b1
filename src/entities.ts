import { AuditLogEntity } from './admin-framework/audit/audit-log.entity.js';
import { ApiKeyEntity } from './api-keys/entities/api-key.entity.js';
import { AssistantEntity } from './assistants/entities/assistant.entity.js';
import { UserClaimEntity } from './claims/entities/user-claim.entity.js';
import { ConversationEntity } from './responses/entities/conversation.entity.js';
import { MessageEntity } from './responses/entities/message.entity.js';
import { ResponseEventBatchEntity } from './responses/entities/response-event-batch.entity.js';
import { ResponseEventEntity } from './responses/entities/response-event.entity.js';
import { ResponseEntity } from './responses/entities/response.entity.js';
import { SpecialistEntity } from './specialists/entities/specialist.entity.js';
import { MemoryItemEntity } from './memory/entities/memory-item.entity.js';
import { MemoryOptOutEntity } from './memory/entities/memory-opt-out.entity.js';
import { McpGatewayEntity } from './mcp-gateway/entities/mcp-gateway.entity.js';
import { OrganizationEntity } from './organizations/entities/organization.entity.js';
import { PluginEntity } from './tools/entities/plugin.entity.js';
import { ToolEntity } from './tools/entities/tool.entity.js';
import { StoredFileEntity } from './files/entities/stored-file.entity.js';
import { UsageDailyEntity } from './usage/entities/usage-daily.entity.js';
import { UsageHourlyEntity } from './usage/entities/usage-hourly.entity.js';
import { UsagePendingEntity } from './usage/entities/usage-pending.entity.js';

/**
 * Every entity, listed explicitly: ESM builds cannot rely on glob loading. Like AppModule, a
 * composition root: it knows every feature, so src/database (which features may import) takes the
 * list as a parameter instead of importing it.
 */
export const ENTITIES = [
  OrganizationEntity,
  ApiKeyEntity,
  AssistantEntity,
  SpecialistEntity,
  ConversationEntity,
  ResponseEntity,
  ResponseEventEntity,
  ResponseEventBatchEntity,
  MessageEntity,
  UserClaimEntity,
  MemoryItemEntity,
  MemoryOptOutEntity,
  McpGatewayEntity,
  PluginEntity,
  ToolEntity,
  UsageDailyEntity,
  UsageHourlyEntity,
  UsagePendingEntity,
  AuditLogEntity,
  StoredFileEntity,
];
