import { ApiError } from '../../common/errors/error-catalogue.js';
import {
  encodeConversationCursor,
  encodeMessageCursor,
  parseConversationId,
  parseConversationListQuery,
  parseMessageListQuery,
} from './chat-history-query.dto.js';

const UUID = '0b7c5a52-95d1-4c1e-8f55-6f0c2a1d9e3b';

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof ApiError ? error.code : 'not an ApiError';
  }
  return undefined;
}

describe('chat history query parameters', () => {
  it('defaults and bounds limit per list', () => {
    expect(parseConversationListQuery({})).toEqual({ limit: 20, after: null });
    expect(parseMessageListQuery({})).toEqual({ limit: 100, after: null });
    expect(parseConversationListQuery({ limit: '100' }).limit).toBe(100);
    expect(parseMessageListQuery({ limit: '1000' }).limit).toBe(1000);
    for (const limit of ['0', '101', '-1', '1.5', 'ten', '', ' 5']) {
      expect(codeOf(() => parseConversationListQuery({ limit }))).toBe('invalid_request');
    }
    expect(codeOf(() => parseMessageListQuery({ limit: '1001' }))).toBe('invalid_request');
    expect(codeOf(() => parseConversationListQuery({ limit: ['1', '2'] }))).toBe('invalid_request');
  });

  it('round-trips cursors, keeping microseconds and lowercasing ids', () => {
    const conversation = { updatedAt: '2026-01-01T00:00:00.000001Z', id: UUID.toUpperCase() };
    expect(parseConversationListQuery({ after: encodeConversationCursor(conversation) }).after).toEqual({
      updatedAt: '2026-01-01T00:00:00.000001Z',
      id: UUID,
    });
    const message = { depth: 12, position: 0 };
    expect(parseMessageListQuery({ after: encodeMessageCursor(message) }).after).toEqual(message);
    expect(parseConversationListQuery({ after: '' }).after).toBeNull();
  });

  it('refuses cursors it did not issue', () => {
    const encode = (text: string) => Buffer.from(text).toString('base64url');
    for (const after of [
      'garbage',
      encode(`2026-01-01T00:00:00Z|${UUID}`),
      encode(`2026-01-01T00:00:00.000000Z|not-a-uuid`),
      encode(`2026-01-01T00:00:00.000000Z|${UUID}|extra`),
      encode('3|4'),
    ]) {
      expect(codeOf(() => parseConversationListQuery({ after }))).toBe('invalid_request');
    }
    for (const after of [
      'garbage',
      encode('0|0'),
      encode('1|-1'),
      encode('1|x'),
      encode('1|2|3'),
      encode('99999999999|0'),
    ]) {
      expect(codeOf(() => parseMessageListQuery({ after }))).toBe('invalid_request');
    }
  });

  it("takes bare UUIDs (and the Conversations API's conv_<uuid>) as conversation ids, in any case, and nothing else", () => {
    expect(parseConversationId(UUID.toUpperCase())).toBe(UUID);
    expect(parseConversationId(`conv_${UUID}`)).toBe(UUID);
    expect(parseConversationId(`resp_${UUID}`)).toBeNull();
    expect(parseConversationId('')).toBeNull();
  });
});
