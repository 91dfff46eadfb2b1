import { inputItemObject, inputItemPage } from './input-item-view.js';
import type { InputItem } from '../turns/input-item.types.js';

const RESPONSE = '0b5a3c1e-0000-4000-8000-000000000001';
const HEX = RESPONSE.replaceAll('-', '');

const ITEMS: InputItem[] = [
  { type: 'message', role: 'user', text: 'a' },
  { type: 'message', role: 'user', text: 'b', id: 'msg_mine' },
  { type: 'function_call', callId: 'call_1', name: 'f', arguments: '{}' },
  { type: 'function_call_output', callId: 'call_1', output: 'ok' },
];

describe('input items view', () => {
  it('keeps client ids and derives stable ones from the response id and position', () => {
    expect(ITEMS.map((item, index) => inputItemObject(item, index, RESPONSE).id)).toEqual([
      `msg_${HEX}_0`,
      'msg_mine',
      `fc_${HEX}_2`,
      `fco_${HEX}_3`,
    ]);
  });

  it('shows image and file parts as sent', () => {
    const item: InputItem = {
      type: 'message',
      role: 'user',
      text: 'see',
      parts: [
        { type: 'input_text', text: 'see' },
        { type: 'input_image', imageUrl: 'https://example.com/a.png', detail: 'low' },
        { type: 'input_file', filename: null, fileData: null, fileUrl: 'https://example.com/a.pdf' },
        { type: 'input_file', filename: 'b.txt', fileData: 'data:text/plain;base64,aGk=', fileUrl: null },
      ],
    };
    expect(inputItemObject(item, 0, RESPONSE).content).toEqual([
      { type: 'input_text', text: 'see' },
      { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
      { type: 'input_file', file_url: 'https://example.com/a.pdf' },
      { type: 'input_file', filename: 'b.txt', file_data: 'data:text/plain;base64,aGk=' },
    ]);
  });

  it('pages in either order after a given id', () => {
    const asc = inputItemPage(ITEMS, RESPONSE, { after: 'msg_mine', limit: 1, order: 'asc' });
    expect(asc).toEqual({
      object: 'list',
      data: [expect.objectContaining({ type: 'function_call' })],
      first_id: `fc_${HEX}_2`,
      last_id: `fc_${HEX}_2`,
      has_more: true,
    });
    const desc = inputItemPage(ITEMS, RESPONSE, { after: 'msg_mine', limit: 5, order: 'desc' });
    expect(desc.data.map((item) => item.id)).toEqual([`msg_${HEX}_0`]);
    expect(desc.has_more).toBe(false);
    const empty = inputItemPage(ITEMS, RESPONSE, { after: `msg_${HEX}_0`, limit: 5, order: 'desc' });
    expect(empty).toMatchObject({ data: [], first_id: null, last_id: null, has_more: false });
    expect(() => inputItemPage(ITEMS, RESPONSE, { after: 'msg_other', limit: 5, order: 'asc' })).toThrow(
      'after is not a cursor this endpoint returned',
    );
  });
});
