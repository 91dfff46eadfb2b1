import { ApiError } from '../../common/errors/error-catalogue.js';
import { splitWebSearchTool } from '../../tools/web-search/offline-web-search.tool.js';
import { splitFileSearchTool } from './file-search.tool.js';

const STORE = 'vs_0194b5a6-7a8e-7c3b-9d2f-0123456789ab';

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return `${error.code}: ${error.message}`;
    throw error;
  }
  return 'accepted';
}

describe("a request's web_search and file_search tools", () => {
  it('takes each out of the list, leaving the other tools as they were', () => {
    const fn = { type: 'function', name: 'f' };
    const tools = [
      fn,
      { type: 'file_search', vector_store_ids: [STORE] },
      { type: 'web_search', external_web_access: false },
    ];
    const { fileSearch, rest } = splitFileSearchTool(tools);
    expect(fileSearch?.vectorStoreIds).toHaveLength(1);
    const { webSearch, rest: functions } = splitWebSearchTool(rest);
    expect(webSearch).not.toBeNull();
    expect(functions).toEqual([fn]);
    expect(splitWebSearchTool('not a list')).toEqual({ webSearch: null, rest: 'not a list' });
  });

  it('refuses a second one, at its index', () => {
    const file = { type: 'file_search', vector_store_ids: [STORE] };
    expect(refusal(() => splitFileSearchTool([file, { type: 'function' }, file]))).toBe(
      'invalid_request: tools[2]: a request takes one file_search tool (list every store in it)',
    );
    expect(
      refusal(() =>
        splitWebSearchTool([
          { type: 'web_search', external_web_access: false },
          { type: 'web_search_2025_08_26', external_web_access: false },
        ]),
      ),
    ).toBe('invalid_request: tools[1]: a request takes one web_search tool');
  });
});
