import { redactSecrets } from './tool-runtime.js';
import { toolReferences } from './tool-references.js';
import { parseToolConfig } from './tool-config.js';

describe('redactSecrets', () => {
  it('replaces every secret a call sent, also JSON-escaped and inside longer text', () => {
    const echoed = JSON.stringify({ auth: 'Bearer s3cr"et', again: 's3cr"et', other: 'plain' });
    expect(redactSecrets(echoed, ['s3cr"et', undefined, ''])).toBe(
      JSON.stringify({ auth: 'Bearer [redacted]', again: '[redacted]', other: 'plain' }),
    );
  });
});

describe('toolReferences', () => {
  it('names every variable and the host of each tool kind, by field', () => {
    const rest = parseToolConfig('rest', {
      urlTemplate: 'https://api.example.com/items/{id}',
      headers: { 'x-key': { fromEnv: 'ITEMS_KEY' }, 'x-client': 'literal' },
      auth: { type: 'env', env: 'ITEMS_TOKEN' },
      parameters: { type: 'object', properties: { id: { type: 'string' } } },
    });
    expect(toolReferences('rest', rest)).toEqual({
      env: [
        { field: 'config.headers.x-key.fromEnv', name: 'ITEMS_KEY' },
        { field: 'config.auth.env', name: 'ITEMS_TOKEN' },
      ],
      urls: [{ field: 'config.urlTemplate', url: 'https://api.example.com' }],
    });
    const search = parseToolConfig('web_search', { provider: 'brave', apiKeyEnv: 'BRAVE_KEY' });
    expect(toolReferences('web_search', search)).toEqual({
      env: [{ field: 'config.apiKeyEnv', name: 'BRAVE_KEY' }],
      urls: [{ field: 'config.baseUrl', url: 'https://api.search.brave.com' }],
    });
    const mcp = parseToolConfig('mcp', {
      url: 'https://mcp.example.com/mcp',
      headers: { k: { fromEnv: 'MCP_TOKEN_X' } },
    });
    expect(toolReferences('mcp', mcp)).toEqual({
      env: [{ field: 'config.headers.k.fromEnv', name: 'MCP_TOKEN_X' }],
      urls: [{ field: 'config.url', url: 'https://mcp.example.com/mcp' }],
    });
  });
});
