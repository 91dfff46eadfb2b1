import type { TokenLogprob } from '../llm/llm.types.js';
import type { FileSearchCallResult } from '../tools/server-tool.js';
import type { FileCitation } from './file-citations.js';

export interface OutputTextPart {
  type: 'output_text';
  text: string;
  /** `file_citation`s of the files whose file_search passages the text names or quotes. */
  annotations: FileCitation[];
  /** Filled when the request includes `message.output_text.logprobs`. */
  logprobs: TokenLogprob[];
}

export interface ReasoningTextPart {
  type: 'reasoning_text';
  text: string;
}

export type OutputItem =
  | { type: 'message'; id: string; status: ItemStatus; role: 'assistant'; content: OutputTextPart[] }
  | {
      type: 'function_call';
      id: string;
      call_id: string;
      name: string;
      arguments: string;
      status: ItemStatus;
    }
  | { type: 'handover'; id: string; from_specialist: string; to_specialist: string; reason: string }
  | {
      type: 'oauth_required';
      id: string;
      plugin_id: string;
      plugin_name: string;
      provider_id: string;
      required_scopes: string[];
      auth_url: string;
    }
  | {
      type: 'reasoning';
      id: string;
      status: ItemStatus;
      summary: { type: 'summary_text'; text: string }[];
      content: ReasoningTextPart[];
    }
  | {
      type: 'web_search_call';
      id: string;
      status: ItemStatus | 'searching';
      /** `sources` only with include `web_search_call.action.sources`. */
      action: { type: 'search'; query: string; sources?: { type: 'url'; url: string }[] };
    }
  | {
      type: 'file_search_call';
      id: string;
      status: ItemStatus | 'searching' | 'failed';
      queries: string[];
      results: FileSearchCallResult[] | null;
    };

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';
