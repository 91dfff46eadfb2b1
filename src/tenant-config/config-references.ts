import type { ModelSettings } from '../llm/model-settings.js';

/** What a configuration makes the service reach for: environment variables and hosts, by field. */
export interface ConfigReferences {
  env: { field: string; name: string }[];
  urls: { field: string; url: string }[];
}

/** The references of parsed model settings (`model.apiKeyEnv`, `model.baseUrl`, and each fallback's). */
export function modelReferences(settings: ModelSettings): ConfigReferences {
  if (settings.provider !== 'openai-compatible') return { env: [], urls: [] };
  const references: ConfigReferences = {
    env: settings.apiKeyEnv ? [{ field: 'model.apiKeyEnv', name: settings.apiKeyEnv }] : [],
    urls: [{ field: 'model.baseUrl', url: settings.baseUrl }],
  };
  for (const [index, target] of (settings.fallbacks ?? []).entries()) {
    const field = `model.fallbacks[${index}]`;
    if (target.apiKeyEnv) references.env.push({ field: `${field}.apiKeyEnv`, name: target.apiKeyEnv });
    references.urls.push({ field: `${field}.baseUrl`, url: target.baseUrl });
  }
  return references;
}
