import type { Request } from 'express';
import { loadConfig } from '../config/app-config.js';
import { gatewayUrls } from './gateway-urls.js';

describe('gatewayUrls', () => {
  const req = { protocol: 'http', host: 'backend.internal:8080' } as Request;

  it('puts the gateway on PUBLIC_ADMIN_ORIGIN first', () => {
    const config = loadConfig({
      PUBLIC_ADMIN_ORIGIN: 'https://admin.example.com/',
      PUBLIC_BASE_URL: 'https://api.example.com',
    });
    expect(gatewayUrls(config, req, 'ide')).toEqual({
      resource: 'https://admin.example.com/mcp-gateway/ide',
      metadata: 'https://admin.example.com/mcp-gateway/ide/.well-known/oauth-protected-resource',
    });
  });

  it('falls back to PUBLIC_BASE_URL, then to the origin the request came to', () => {
    expect(gatewayUrls(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com' }), req, 'ide').resource).toBe(
      'https://api.example.com/mcp-gateway/ide',
    );
    expect(gatewayUrls(loadConfig({}), req, 'ide').resource).toBe(
      'http://backend.internal:8080/mcp-gateway/ide',
    );
  });
});
