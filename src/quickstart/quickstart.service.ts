import { Inject, Injectable } from '@nestjs/common';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { AssistantsService } from '../assistants/assistants.service.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { OrganizationsService } from '../organizations/organizations.service.js';

export interface QuickstartCredentials {
  organization: string;
  assistantId: string;
  apiKey: string;
}

export const DEMO_ASSISTANT_MODEL = {
  provider: 'offline',
  functionCalling: true,
  script: [
    {
      match: '^(hi|hello|hey)\\b',
      reply: 'Hello! I am the Switchboard demo assistant, running on the offline model.',
    },
    { match: 'weather in (\\w+)', call: { tool: 'get_weather', arguments: { city: 'Paris' } } },
  ],
};

/**
 * First start on an empty embedded database: a demo organization, an assistant on the offline
 * model and a full-access key, so a newcomer has something to call. Never with DATABASE_URL.
 */
@Injectable()
export class QuickstartService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly organizations: OrganizationsService,
    private readonly assistants: AssistantsService,
    private readonly apiKeys: ApiKeysService,
  ) {}

  async seedIfEmpty(): Promise<QuickstartCredentials | null> {
    if (!this.config.quickstart.enabled) return null;
    if ((await this.organizations.count()) > 0) return null;
    const organization = await this.organizations.create({ slug: 'demo', name: 'Demo organization' });
    const assistant = await this.assistants.create(organization.id, {
      name: 'Demo assistant',
      instructions: 'You are a friendly demo assistant.',
      model: DEMO_ASSISTANT_MODEL,
    });
    const { secret } = await this.apiKeys.create(organization.id, 'quickstart', ['full_access']);
    return { organization: organization.slug, assistantId: assistant.id, apiKey: secret };
  }
}
