import type { ModelSettings } from '../llm/model-settings.js';
import type { HeaderValue, ToolConfig, ToolKind } from '../tools/tool-config.js';

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

function headerReferences(headers: Record<string, HeaderValue>): ConfigReferences['env'] {
  return Object.entries(headers).flatMap(([header, value]) =>
    typeof value === 'string' ? [] : [{ field: `config.headers.${header}.fromEnv`, name: value.fromEnv }],
  );
}

/** The references of a parsed tool configuration of `kind`. */
export function toolReferences(kind: ToolKind, config: ToolConfig): ConfigReferences {
  if (kind === 'web_search' && 'provider' in config) {
    return {
      env: config.provider === 'brave' ? [{ field: 'config.apiKeyEnv', name: config.apiKeyEnv }] : [],
      urls: [{ field: 'config.baseUrl', url: config.baseUrl }],
    };
  }
  if (kind === 'rest' && 'urlTemplate' in config) {
    const env = headerReferences(config.headers);
    if (config.auth.type === 'env') env.push({ field: 'config.auth.env', name: config.auth.env });
    // The host is fixed (placeholders are refused there); the path's placeholders do not matter.
    const origin = new URL(config.urlTemplate.replace(/\{[a-zA-Z0-9_-]+\}/g, 'x')).origin;
    return { env, urls: [{ field: 'config.urlTemplate', url: origin }] };
  }
  if (kind === 'mcp' && 'url' in config) {
    return { env: headerReferences(config.headers), urls: [{ field: 'config.url', url: config.url }] };
  }
  return { env: [], urls: [] };
}

/** The variables a configuration names, for filtering the environment it may read at call time. */
export function envNames(references: ConfigReferences): string[] {
  return references.env.map(({ name }) => name);
}
