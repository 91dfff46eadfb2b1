import type { ModelSettings } from '../llm/model-settings.js';

/** What a configuration makes the service reach for: environment variables and hosts, by field. */
export interface ConfigReferences {
  env: { field: string; name: string }[];
  urls: { field: string; url: string }[];
}

/** The references of parsed model settings (`model.apiKeyEnv`, `model.baseUrl`). */
export function modelReferences(settings: ModelSettings): ConfigReferences {
  if (settings.provider !== 'openai-compatible') return { env: [], urls: [] };
  return {
    env: settings.apiKeyEnv ? [{ field: 'model.apiKeyEnv', name: settings.apiKeyEnv }] : [],
    urls: [{ field: 'model.baseUrl', url: settings.baseUrl }],
  };
}
