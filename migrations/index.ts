import { Foundation1795300641295 } from './1795300641295-foundation.js';
import { ConversationsAndAgents1795301086401 } from './1795301086401-conversations-and-agents.js';
import { UserClaimsAndMemory1795301293355 } from './1795301293355-user-claims-and-memory.js';
import { McpGateways1795301371344 } from './1795301371344-mcp-gateways.js';
import { ToolsAndPlugins1795301492442 } from './1795301492442-tools-and-plugins.js';
import { ConversationsApi1795500000000 } from './1795500000000-conversations-api.js';
import { ResponseBody1795609207091 } from './1795609207091-response-body.js';
import { AdminApi1795610000000 } from './1795610000000-admin-api.js';
import { DurableTurns1795610048721 } from './1795610048721-durable-turns.js';
import { Usage1795700000000 } from './1795700000000-usage.js';
import { TenantConfig1795800000000 } from './1795800000000-tenant-config.js';
import { AuditAppendOnly1795800000300 } from './1795800000300-audit-append-only.js';
import { GatewayNamesPerOrganization1795812345678 } from './1795812345678-gateway-names-per-organization.js';
import { Files1795900000000 } from './1795900000000-files.js';
import { UpstreamAttempts1796200000001 } from './1796200000001-upstream-attempts.js';
import { VectorStores1796300000001 } from './1796300000001-vector-stores.js';
import { WebSearchCache1796420000001 } from './1796420000001-web-search-cache.js';
import { OrganizationEmbeddings1796420000002 } from './1796420000002-organization-embeddings.js';
import { VectorIndex1796430000001 } from './1796430000001-vector-index.js';
import { UsageHourly1796440000001 } from './1796440000001-usage-hourly.js';
import { UsagePending1796450000001 } from './1796450000001-usage-pending.js';
import { ResponseEventBatches1796510000001 } from './1796510000001-response-event-batches.js';
import { MessagesByConversation1796530000001 } from './1796530000001-messages-by-conversation.js';
import { ConversationHeadCreatedAt1796650000001 } from './1796650000001-conversation-head-created-at.js';
import { TurnColumnsLz41796660000001 } from './1796660000001-turn-columns-lz4.js';
import { TurnKeyChecks1796670000201 } from './1796670000201-turn-key-checks.js';

/** Every migration in order. `npm run migration:generate` appends to this list. */
export const MIGRATIONS: Function[] = [
  Foundation1795300641295,
  ConversationsAndAgents1795301086401,
  UserClaimsAndMemory1795301293355,
  McpGateways1795301371344,
  ToolsAndPlugins1795301492442,
  ConversationsApi1795500000000,
  ResponseBody1795609207091,
  AdminApi1795610000000,
  DurableTurns1795610048721,
  Usage1795700000000,
  TenantConfig1795800000000,
  AuditAppendOnly1795800000300,
  GatewayNamesPerOrganization1795812345678,
  Files1795900000000,
  UpstreamAttempts1796200000001,
  VectorStores1796300000001,
  WebSearchCache1796420000001,
  OrganizationEmbeddings1796420000002,
  VectorIndex1796430000001,
  UsageHourly1796440000001,
  UsagePending1796450000001,
  ResponseEventBatches1796510000001,
  MessagesByConversation1796530000001,
  ConversationHeadCreatedAt1796650000001,
  TurnColumnsLz41796660000001,
  TurnKeyChecks1796670000201,
];
