import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

/**
 * Reads a Chat Completions event stream and yields, per network read, the chunks it completed.
 * The SDK's own stream iterator yields one chunk at a time through several async generators;
 * batching per read lets a turn relay a burst of tokens in one socket write.
 */
export async function* readChatCompletionChunks(
  body: ReadableStream<Uint8Array>,
): AsyncIterable<ChatCompletionChunk[]> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const chunks: ChatCompletionChunk[] = [];
      let end: number;
      while ((end = eventEnd(buffer)) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(buffer[end] === '\r' ? end + 4 : end + 2);
        const data = dataOf(block);
        if (data === undefined) continue;
        if (data === '[DONE]') {
          if (chunks.length > 0) yield chunks;
          return;
        }
        const parsed = JSON.parse(data) as ChatCompletionChunk & { error?: unknown };
        if (parsed.error) throw new Error('The upstream reported an error in the stream');
        chunks.push(parsed);
      }
      if (chunks.length > 0) yield chunks;
    }
  } finally {
    reader.releaseLock();
  }
}

/** Where the first complete event of the buffer ends (a blank line), or -1. */
function eventEnd(buffer: string): number {
  const lf = buffer.indexOf('\n\n');
  const crlf = buffer.indexOf('\r\n\r\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return crlf;
  return lf;
}

/** The `data:` payload of one event (several data lines join with newlines), or undefined. */
function dataOf(block: string): string | undefined {
  let data: string | undefined;
  for (const line of block.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}
