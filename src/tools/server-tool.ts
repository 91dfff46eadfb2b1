/**
 * The seam between turns (and the MCP gateway) and the tools the service runs itself:
 * web search, REST tools, remote MCP tools, memory. A turn asks the catalogue for the tools of
 * an assistant (or specialist); the gateway asks for the tools it exposes.
 */
export interface JsonSchemaObject {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  [key: string]: unknown;
}

export interface ServerToolDefinition {
  /** Unique within what one model call sees; `^[a-zA-Z0-9_-]{1,64}$`. */
  name: string;
  description: string;
  parameters: JsonSchemaObject;
}

/** Per-request facts a tool may use. Tokens are the end user's, passed per request. */
export interface ToolExecutionContext {
  organizationId: string;
  assistantId?: string;
  userId?: string;
  /** `x-user-token`, forwarded unchanged to MCP servers configured for it. */
  userToken?: string;
  /** `x-user-tokens`: OAuth provider id → access token. */
  userTokens?: Record<string, string>;
  signal: AbortSignal;
}

/** A plugin needing the user's OAuth token that the request did not carry (or that was refused). */
export interface OAuthRequirement {
  pluginId: string;
  pluginName: string;
  providerId: string;
  requiredScopes: string[];
  authUrl: string;
}

export type ToolResult =
  | {
      ok: true;
      /** What the model reads, usually JSON text. */
      output: string;
      /** For web search: the query and its results (the stream events count them, the cache keeps them). */
      webSearch?: { query: string; results: WebSearchSource[] };
      /**
       * For file search: the queries, (with include `file_search_call.results`) the results, and
       * always the passages given to the model (the answer's `file_citation` annotations cite them).
       */
      fileSearch?: {
        queries: string[];
        results: FileSearchCallResult[] | null;
        passages: { file_id: string; filename: string; text: string }[];
      };
    }
  | {
      ok: false;
      /** Readable by the model; never a stack or a secret. */
      error: string;
      oauthRequired?: OAuthRequirement;
    };

/** One web search result: what the model reads and what `web_search_call.action.sources` lists. */
export interface WebSearchSource {
  title: string;
  url: string;
  snippet: string;
}

export type ServerToolKind = 'web_search' | 'file_search' | 'rest' | 'mcp' | 'memory';

/** One result of a file_search_call item (OpenAI's shape, with Open Responses' `vector_store_id`). */
export interface FileSearchCallResult {
  file_id: string;
  filename: string;
  score: number;
  text: string;
  attributes: Record<string, string | number | boolean>;
  vector_store_id: string;
}

export interface ServerTool {
  kind: ServerToolKind;
  definition: ServerToolDefinition;
  /** Never throws: failures and timeouts come back as `{ ok: false }`. */
  execute(args: Record<string, unknown>, context: ToolExecutionContext): Promise<ToolResult>;
}

/** The request's credentials, needed already to list the tools of MCP servers. */
export interface ResolveOptions {
  /** `x-user-token`. */
  userToken?: string;
  /** `x-user-tokens`. */
  userTokens?: Record<string, string>;
  signal?: AbortSignal;
}
