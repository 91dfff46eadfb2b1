import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { AssistantsService } from '../assistants/assistants.service.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import type { ChatMessage } from '../llm/llm.types.js';
import { estimateAllTokens } from '../llm/token-estimate.js';
import { parseResponseId } from './dto/create-response.dto.js';
import type { CompactResponseDto } from './dto/compact-response.dto.js';
import { sealSummary } from './compaction-content.js';
import { TurnStore } from './store/turn-store.repository.js';
import { inputToTranscript } from '../turns/transcript.js';

/** Open Responses `CompactResource`. */
export interface CompactionObject {
  id: string;
  object: 'response.compaction';
  output: CompactedItem[];
  created_at: number;
  usage: {
    input_tokens: number;
    output_tokens: number;
    total_tokens: number;
    input_tokens_details: { cached_tokens: number };
    output_tokens_details: { reasoning_tokens: number };
  };
}

export type CompactedItem =
  | {
      type: 'message';
      id: string;
      status: 'completed';
      role: 'user';
      content: { type: 'input_text'; text: string }[];
    }
  | { type: 'compaction'; id: string; encrypted_content: string };

/** Longest text one summary line keeps of a message; the rest is cut with an ellipsis. */
const LINE_CHARS = 500;

/**
 * POST /v1/responses/compact: a conversation (the request's input after the thread of
 * `previous_response_id`, read with the same tenant checks as a turn) becomes the newest user
 * message, verbatim, and one `compaction` item holding a summary of everything else. The
 * summary is extractive and deterministic (one line per message, cut at LINE_CHARS), so it
 * costs no model call; a later POST /v1/responses takes both items back as `input`.
 */
@Injectable()
export class CompactionService {
  constructor(
    private readonly assistants: AssistantsService,
    private readonly store: TurnStore,
  ) {}

  async compact(
    principal: ApiKeyPrincipal,
    request: CompactResponseDto,
    userId: string | null,
  ): Promise<CompactionObject> {
    const organizationId = principal.organizationId;
    const assistant = await this.assistants.findForTurn(organizationId, request.assistantId);
    if (!assistant) throw new ApiError('assistant_not_found', `No assistant asst_${request.assistantId}`);
    let history: ChatMessage[] = [];
    if (request.previousResponseId !== null) {
      const uuid = parseResponseId(request.previousResponseId);
      const previous = uuid ? await this.store.loadThread(organizationId, assistant.id, userId, uuid) : null;
      if (!previous) throw new ApiError('response_not_found', `No response ${request.previousResponseId}`);
      if (!previous.complete) {
        throw new ApiError(
          'invalid_request',
          `previous_response_id ${request.previousResponseId} continues a thread from which an earlier response was deleted; it can no longer be compacted`,
        );
      }
      history = previous.history.messages();
    }
    // Attachments are named in the summary, not carried: the compacted list is text.
    const input = request.input.map((item) =>
      item.type === 'message' ? { ...item, parts: undefined } : item,
    );
    const messages = [...history, ...inputToTranscript(input)];
    const newest = messages.findLastIndex((message) => message.role === 'user');
    const summary = [
      ...(request.instructions ? [`instructions: ${cut(request.instructions)}`] : []),
      ...messages.flatMap((message, index) => (index === newest ? [] : summaryLines(message))),
    ].join('\n');
    const output: CompactedItem[] = [];
    if (newest >= 0) {
      output.push({
        type: 'message',
        id: `msg_${randomUUID().replaceAll('-', '')}`,
        status: 'completed',
        role: 'user',
        content: [{ type: 'input_text', text: textOf(messages[newest]) }],
      });
    }
    output.push({
      type: 'compaction',
      id: `cmp_${randomUUID().replaceAll('-', '')}`,
      encrypted_content: sealSummary(summary),
    });
    const inputTokens = estimateAllTokens(messages);
    return {
      id: `resp_${randomUUID()}`,
      object: 'response.compaction',
      output,
      created_at: Math.floor(Date.now() / 1000),
      usage: {
        input_tokens: inputTokens,
        output_tokens: 0,
        total_tokens: inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      },
    };
  }
}

function summaryLines(message: ChatMessage): string[] {
  if (message.role === 'tool') return [`tool result (${message.tool_call_id}): ${cut(message.content)}`];
  const lines = textOf(message) ? [`${message.role}: ${cut(textOf(message))}`] : [];
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      lines.push(`assistant called ${call.function.name}(${cut(call.function.arguments)}) as ${call.id}`);
    }
  }
  return lines;
}

function textOf(message: ChatMessage): string {
  const content = message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function cut(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= LINE_CHARS ? flat : `${flat.slice(0, LINE_CHARS)}…`;
}
