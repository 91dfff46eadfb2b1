import { ApiKeyEntity } from '../api-keys/entities/api-key.entity.js';
import { AssistantEntity } from '../assistants/entities/assistant.entity.js';
import { OrganizationEntity } from '../organizations/entities/organization.entity.js';

/** Every entity, listed explicitly: ESM builds cannot rely on glob loading. */
export const ENTITIES = [OrganizationEntity, ApiKeyEntity, AssistantEntity];
