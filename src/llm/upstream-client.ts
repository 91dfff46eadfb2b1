import OpenAI from 'openai';

/** What differs between the model calls' clients and the embedders'. */
export interface UpstreamClientOptions {
  baseURL: string;
  apiKey: string;
  fetch: typeof globalThis.fetch;
  maxRetries: number;
  timeout: number;
}

/**
 * An openai SDK client for one upstream, made only of what it is given. Left to itself the SDK
 * reads the service's environment: `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID` would go as headers
 * to every upstream, organization-written ones included (an organization admin is not trusted
 * beyond its organization), and `OPENAI_LOG` would write request details to the console beside
 * the service's JSON logs. `OPENAI_CUSTOM_HEADERS` cannot be turned off here; the config refuses
 * it at boot (app-config.ts).
 */
export function upstreamClient(options: UpstreamClientOptions): OpenAI {
  return new OpenAI({ ...options, organization: null, project: null, logLevel: 'off' });
}
