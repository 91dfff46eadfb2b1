import type { ArgumentMetadata } from '@nestjs/common';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { ApiValidationPipe } from '../../common/validation/validation.pipe.js';
import {
  ConversationListQueryDto,
  encodeConversationCursor,
  encodeMessageCursor,
  MessageListQueryDto,
  parseConversationId,
} from './chat-history-query.dto.js';

const UUID = '0b7c5a52-95d1-4c1e-8f55-6f0c2a1d9e3b';
const pipe = new ApiValidationPipe();

/** The query as the global pipe hands it to the controller. */
function query<T>(metatype: new () => T, raw: Record<string, unknown>): Promise<T> {
  return pipe.transform(raw, { type: 'query', metatype } as ArgumentMetadata) as Promise<T>;
}

async function failure(
  metatype: new () => unknown,
  raw: Record<string, unknown>,
): Promise<ApiError | undefined> {
  try {
    await query(metatype, raw);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  return undefined;
}

describe('chat history query parameters', () => {
  it('defaults and bounds limit per list', async () => {
    expect(await query(ConversationListQueryDto, {})).toMatchObject({ limit: 20 });
    expect((await query(ConversationListQueryDto, {})).after).toBeUndefined();
    expect(await query(MessageListQueryDto, {})).toMatchObject({ limit: 100 });
    expect((await query(ConversationListQueryDto, { limit: '100' })).limit).toBe(100);
    expect((await query(MessageListQueryDto, { limit: '1000' })).limit).toBe(1000);
    for (const limit of ['0', '101', '-1', '1.5', 'ten', '', ' 5', ['1', '2']]) {
      expect(await failure(ConversationListQueryDto, { limit })).toMatchObject({
        code: 'invalid_request',
        message: 'limit must be a whole number from 1 to 100',
      });
    }
    expect((await failure(MessageListQueryDto, { limit: '1001' }))?.code).toBe('invalid_request');
  });

  it('round-trips the cursors it issues, keeping microseconds', async () => {
    const conversation = { updatedAt: '2026-01-01T00:00:00.000001Z', id: UUID };
    const after = encodeConversationCursor(conversation);
    expect((await query(ConversationListQueryDto, { after })).after).toEqual(conversation);
    const message = { depth: 12, position: 0 };
    expect((await query(MessageListQueryDto, { after: encodeMessageCursor(message) })).after).toEqual(
      message,
    );
    expect((await query(ConversationListQueryDto, { after: '' })).after).toBeUndefined();
  });

  it('refuses every cursor it did not issue, and parameters it does not take', async () => {
    const encode = (text: string) => Buffer.from(text).toString('base64url');
    const issued = encodeConversationCursor({ updatedAt: '2026-01-01T00:00:00.000001Z', id: UUID });
    for (const after of [
      'garbage',
      `${issued}=`,
      `${issued}.`,
      [issued, issued],
      { $gt: 'x' },
      encode(`2026-01-01T00:00:00Z|${UUID}`),
      encode(`2026-01-01T00:00:00.000000Z|${UUID.toUpperCase()}`),
      encode(`2026-01-01T00:00:00.000000Z|not-a-uuid`),
      encode(`2026-01-01T00:00:00.000000Z|${UUID}|extra`),
      encode('3|4'),
    ]) {
      expect(await failure(ConversationListQueryDto, { after })).toMatchObject({
        code: 'invalid_request',
        message: 'after is not a cursor this endpoint returned',
      });
    }
    for (const after of [
      'garbage',
      encode('0|0'),
      encode('1|-1'),
      encode('1|x'),
      encode('01|2'),
      encode('1|2|3'),
    ]) {
      expect((await failure(MessageListQueryDto, { after }))?.code).toBe('invalid_request');
    }
    // Express's default (simple) query parser leaves `after[$gt]=x` as a parameter of that name.
    expect(await failure(ConversationListQueryDto, { 'after[$gt]': 'x' })).toMatchObject({
      code: 'invalid_request',
      message: 'after[$gt] is not a field or parameter this endpoint accepts',
    });
    expect((await failure(MessageListQueryDto, { assistant_id: UUID }))?.message).toContain('assistant_id');
  });

  it('takes the assistant filter bare or prefixed, and returns it bare', async () => {
    expect((await query(ConversationListQueryDto, { assistant_id: `asst_${UUID}` })).assistant_id).toBe(UUID);
    expect((await query(ConversationListQueryDto, { assistant_id: '' })).assistant_id).toBeUndefined();
    expect((await failure(ConversationListQueryDto, { assistant_id: 'asst_123' }))?.message).toContain(
      'assistant_id must be an assistant UUID',
    );
  });

  it('takes bare UUIDs as conversation ids, in any case, and nothing else', () => {
    expect(parseConversationId(UUID.toUpperCase())).toBe(UUID);
    expect(parseConversationId(`conv_${UUID}`)).toBeNull();
    expect(parseConversationId('')).toBeNull();
  });
});
