import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isServiceVariable } from './service-environment.js';

describe('the service environment no configuration may name', () => {
  it('covers every variable the app config reads', () => {
    const source = readFileSync(resolve('src/config/app-config.ts'), 'utf8');
    const names = [...source.matchAll(/'([A-Z][A-Z0-9_]{2,})'/g)]
      .map((match) => match[1])
      .filter((name) => name !== 'APP_CONFIG');
    expect(names.length).toBeGreaterThan(50);
    expect(names.filter((name) => !isServiceVariable(name))).toEqual([]);
  });

  it('covers whole families, whatever the case, and leaves provider keys to grants', () => {
    for (const name of [
      'DATABASE_URL',
      'database_url',
      'REDIS_URL',
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OIDC_CLIENT_SECRET',
      'PGPASSWORD',
      'METRICS_TOKEN',
    ]) {
      expect([name, isServiceVariable(name)]).toEqual([name, true]);
    }
    for (const name of ['OPENAI_API_KEY', 'ACME_LLM_KEY', 'BRAVE_API_KEY']) {
      expect([name, isServiceVariable(name)]).toEqual([name, false]);
    }
  });
});
