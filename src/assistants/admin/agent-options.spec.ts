import { jest } from '@jest/globals';

// The installed `yaml` package cannot be loaded (a broken install): its import rejects.
jest.unstable_mockModule('yaml', () => {
  throw new Error("Cannot find package 'yaml'");
});

const { modelFrom } = await import('./agent-options.js');
const { YamlParserUnavailableError } = await import('../../admin-framework/yaml-parser.js');

describe('--model-file when the YAML parser fails to load', () => {
  it('fails as an internal error of the tool, not as a file that is not valid JSON or YAML', async () => {
    const context = { options: { 'model-file': '/dev/null' }, args: [], cwd: '/' };
    const failure = await modelFrom(context as unknown as Parameters<typeof modelFrom>[0]).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(YamlParserUnavailableError);
    expect((failure as Error).message).toMatch(
      /^internal error: the YAML parser \(package "yaml"\) could not be loaded/,
    );
    expect((failure as Error).message).not.toContain('is not valid JSON or YAML');
  });
});
