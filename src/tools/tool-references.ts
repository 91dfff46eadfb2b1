import type { ConfigReferences } from '../tenant-config/config-references.js';
import type { HeaderValue, ToolConfig, ToolKind } from './tool-config.js';

/** What a tool configuration names and reaches, by field, for TenantConfigPolicy. */
function headerReferences(headers: Record<string, HeaderValue>): ConfigReferences['env'] {
  return Object.entries(headers).flatMap(([header, value]) =>
    typeof value === 'string' ? [] : [{ field: `config.headers.${header}.fromEnv`, name: value.fromEnv }],
  );
}

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
