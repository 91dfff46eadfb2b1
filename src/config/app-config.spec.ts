import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig', () => {
  it('gives every setting its documented default on an empty environment', () => {
    const config = loadConfig({});
    expect(config.server).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
      bodyLimitBytes: 4 * 1024 * 1024,
      maxHeaderBytes: 16 * 1024,
    });
    expect(config.database).toMatchObject({
      url: undefined,
      embeddedDataDir: resolve('.switchboard/data'),
      runMigrationsOnBoot: true,
      embeddedMaintenanceMs: 60_000,
    });
    expect(config.auth.apiKeyCacheTtlMs).toBe(5000);
    expect(config.quickstart.enabled).toBe(true);
    expect(config.logging.level).toBe('log');
  });

  it('reads typed values', () => {
    const config = loadConfig({
      PORT: '9000',
      BODY_LIMIT: '512kb',
      MAX_HEADER_SIZE: '64kb',
      API_KEY_CACHE_TTL_SECONDS: '0',
      TRUST_PROXY: 'yes',
      DATABASE_URL: 'postgres://app@db:5432/switchboard',
    });
    expect(config.server).toMatchObject({
      port: 9000,
      bodyLimitBytes: 512 * 1024,
      maxHeaderBytes: 64 * 1024,
      trustProxy: true,
    });
    expect(config.auth.apiKeyCacheTtlMs).toBe(0);
    expect(config.database.url).toBe('postgres://app@db:5432/switchboard');
  });

  it('bounds the upstream clients a replica keeps (UPSTREAM_MAX_CLIENTS)', () => {
    expect(loadConfig({}).upstream.maxClients).toBe(256);
    expect(loadConfig({ UPSTREAM_MAX_CLIENTS: '4096' }).upstream.maxClients).toBe(4096);
    expect(() => loadConfig({ UPSTREAM_MAX_CLIENTS: '0' })).toThrow(ConfigError);
  });

  it('never enables the quickstart against PostgreSQL', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://db/x', QUICKSTART: 'true' }).quickstart.enabled).toBe(
      false,
    );
    expect(loadConfig({ QUICKSTART: 'false' }).quickstart.enabled).toBe(false);
  });

  it('reads the Files API limits, in gb too', () => {
    expect(loadConfig({}).files).toEqual({ maxBytes: 32 * 1024 ** 2, organizationMaxBytes: 1024 ** 3 });
    expect(loadConfig({ FILES_MAX_BYTES: '512mb', FILES_ORG_MAX_BYTES: '20gb' }).files).toEqual({
      maxBytes: 512 * 1024 ** 2,
      organizationMaxBytes: 20 * 1024 ** 3,
    });
  });

  it.each([
    ['PORT', 'abc', 'must be a whole number (got "abc")'],
    ['PORT', '70000', 'must be between 0 and 65535'],
    ['BODY_LIMIT', 'huge', 'must be a size'],
    ['MAX_HEADER_SIZE', '2mb', 'must be between 1kb and 1mb'],
    ['DATABASE_URL', 'mysql://db/x', 'must use postgres: or postgresql:'],
    ['DATABASE_URL', 'not a url', 'must be an absolute URL'],
    ['API_KEY_CACHE_TTL_SECONDS', '-1', 'must be between 0 and 300'],
    ['EMBEDDED_MAINTENANCE_SECONDS', '86401', 'must be between 0 and 86400'],
    ['TRUST_PROXY', 'maybe', 'must be true or false'],
    ['HTTP_KEEP_ALIVE_TIMEOUT_SECONDS', '0', 'must be between 1 and 3600'],
    ['LOG_LEVEL', 'verbose', 'must be one of'],
    // A share is at most the replica-wide total it divides (512, 64 by default).
    ['MAX_IN_FLIGHT_PER_ORGANIZATION', '513', 'must be between 1 and 512'],
    ['BACKGROUND_MAX_RUNNING_PER_ORGANIZATION', '65', 'must be between 1 and 64'],
    ['RESUME_POLL_MAX_MS', '100', 'must be at least RESUME_POLL_MS'],
    ['VECTOR_STORE_INGEST_POLL_MAX_MS', '500', 'must be at least VECTOR_STORE_INGEST_POLL_MS'],
    ['QUOTA_TOOLS_PER_ORGANIZATION', '-1', 'must be between 0 and'],
    ['FILES_MAX_BYTES', '1gb', 'must be between 1kb and 512mb'],
    ['FILES_ORG_MAX_BYTES', '16mb', 'must be at least FILES_MAX_BYTES'],
    // The SDK would add them to every upstream's requests, organization-written ones included.
    ['OPENAI_CUSTOM_HEADERS', 'X-Team: platform', 'is not supported'],
  ])('rejects %s=%s with a message naming the variable', (variable, value, detail) => {
    let thrown: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).variable).toBe(variable);
    expect((thrown as ConfigError).message).toMatch(new RegExp(`^Invalid configuration: ${variable} `));
    expect((thrown as ConfigError).message).toContain(detail);
  });
});

describe('administrator tokens and metrics', () => {
  const oidc = { OIDC_ISSUER: 'https://idp.example.com/realms/x', OIDC_CLIENT_ID: 'backend' };

  it('needs an audience of their own with ADMIN_GROUP, never one the MCP gateway accepts', () => {
    expect(() => loadConfig({ ...oidc, ADMIN_GROUP: '/platform/admins' })).toThrow(
      /^Invalid configuration: ADMIN_AUDIENCE is required/,
    );
    for (const audience of ['backend', 'ide']) {
      expect(() =>
        loadConfig({
          ...oidc,
          OIDC_EXTRA_AUDIENCES: 'ide',
          ADMIN_GROUP: '/platform/admins',
          ADMIN_AUDIENCE: audience,
        }),
      ).toThrow(/^Invalid configuration: ADMIN_AUDIENCE must differ/);
    }
    const config = loadConfig({ ...oidc, ADMIN_GROUP: '/platform/admins', ADMIN_AUDIENCE: 'admin-api' });
    expect(config.oidc.adminAudience).toBe('admin-api');
  });

  it('keeps /metrics closed unless METRICS_PUBLIC=true', () => {
    expect(loadConfig({}).metrics).toEqual({ token: undefined, public: false });
    expect(loadConfig({ METRICS_PUBLIC: 'true' }).metrics.public).toBe(true);
  });
});

describe('.env.example', () => {
  it('lists every variable the configuration reads, with its default', () => {
    const source = readFileSync(resolve('src/config/app-config.ts'), 'utf8');
    const read = new Set([...source.matchAll(/\(env, '([A-Z][A-Z0-9_]*)'/g)].map((match) => match[1]));
    const example = readFileSync(resolve('.env.example'), 'utf8');
    const listed = new Set([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]));
    expect(read.size).toBeGreaterThan(20);
    expect([...read].filter((name) => !listed.has(name))).toEqual([]);
    expect([...listed].filter((name) => !read.has(name))).toEqual([]);
  });
});
