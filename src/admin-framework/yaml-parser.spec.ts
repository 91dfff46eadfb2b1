import { jest } from '@jest/globals';

// The installed `yaml` package cannot be loaded (a broken install): its import rejects.
jest.unstable_mockModule('yaml', () => {
  throw new Error("Cannot find package 'yaml' imported from apply-document.js");
});

const { parseApplyDocument } = await import('./apply/apply-document.js');
const { YamlParserUnavailableError } = await import('./yaml-parser.js');

/**
 * A failure to load the YAML parser is the tool's own, reported as an internal error (the admin
 * runner prints its message, never a stack), not as the user's file being bad YAML.
 */
describe('the YAML parser failing to load', () => {
  const internal = {
    message: expect.stringContaining(
      `internal error: the YAML parser (package "yaml") could not be loaded: Cannot find package 'yaml'`,
    ),
  };

  it('fails an apply of a YAML file as an internal error, not as a file that could not be parsed', async () => {
    const failure = await parseApplyDocument('organizations: []\n', 'switchboard.yaml').catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(YamlParserUnavailableError);
    expect(failure).toMatchObject(internal);
    expect((failure as Error).message).not.toContain('could not be parsed');
  });

  it('still applies a JSON file, which needs no YAML parser', async () => {
    await expect(parseApplyDocument('{"organizations": []}', 'switchboard.json')).resolves.toEqual({
      organizations: [],
    });
  });
});
