import type * as Yaml from 'yaml';

/**
 * The admin tool could not load its YAML parser (a broken install): its own failure, reported as
 * such, never as a mistake in the user's file (which was not parsed).
 */
export class YamlParserUnavailableError extends Error {}

/**
 * The YAML parser, loaded by the first use (an admin command), not with the service. Only the
 * load is checked here; what the parser then says about a file is the file's problem.
 */
export async function loadYamlParser(): Promise<typeof Yaml> {
  try {
    return await import('yaml');
  } catch (error) {
    throw new YamlParserUnavailableError(
      `internal error: the YAML parser (package "yaml") could not be loaded: ${(error as Error).message.split('\n')[0]}; nothing was changed; reinstall the tool's dependencies (npm ci)`,
    );
  }
}
