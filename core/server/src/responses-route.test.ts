import { describe, expect, test } from 'bun:test';
import { GatewayError, type JsonObject, type StoredResponse } from '@gateway/sdk';
import { includeOf, inputAsIncluded, inputItemsPage, outputAsIncluded, responsesRoute } from './responses-route.ts';

describe('responses routes', () => {
  test('which paths and methods are Responses routes; the rest stays passthrough', () => {
    expect(responsesRoute('POST', '/v1/responses')).toEqual({ op: 'create' });
    expect(responsesRoute('GET', '/v1/responses/resp_1')).toEqual({ op: 'retrieve', id: 'resp_1' });
    expect(responsesRoute('DELETE', '/v1/responses/resp_1')).toEqual({ op: 'delete', id: 'resp_1' });
    expect(responsesRoute('GET', '/v1/responses/resp_1/input_items')).toEqual({ op: 'inputItems', id: 'resp_1' });
    expect(responsesRoute('POST', '/v1/responses/resp_1/cancel')).toBeUndefined();
    expect(responsesRoute('GET', '/v1/responses')).toBeUndefined();
    expect(responsesRoute('POST', '/v1/responsesx')).toBeUndefined();
  });

  const stored = (n: number): StoredResponse => ({
    id: 'resp_1',
    workspaceId: 'ws',
    response: { id: 'resp_1', object: 'response', output: [] },
    inputItems: Array.from({ length: n }, (_, i) => ({ id: `msg_${i}`, type: 'message', role: 'user', content: `m${i}` })),
    context: [],
    provider: 'p',
    translated: true,
    createdAt: 0,
  });
  const page = (n: number, query: string) => inputItemsPage(stored(n), new URLSearchParams(query), new Set());
  const ids = (list: JsonObject) => (list.data as JsonObject[]).map((item) => item.id);

  test('input_items: newest first by default, limit, after, has_more, first and last ids', () => {
    expect(ids(page(3, ''))).toEqual(['msg_2', 'msg_1', 'msg_0']);
    const first = page(25, 'order=asc&limit=10');
    expect(first).toMatchObject({ object: 'list', first_id: 'msg_0', last_id: 'msg_9', has_more: true });
    expect(ids(page(25, 'order=asc&limit=10&after=msg_19'))).toEqual(['msg_20', 'msg_21', 'msg_22', 'msg_23', 'msg_24']);
    expect(page(25, 'order=asc&limit=10&after=msg_19').has_more).toBe(false);
    expect(ids(page(25, '')).length).toBe(20);
    expect(page(0, '')).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  test('input_items: bad limit, order or after are 400s naming them', () => {
    for (const [query, param] of [['limit=0', 'limit'], ['limit=101', 'limit'], ['limit=x', 'limit'], ['order=up', 'order'], ['after=nope', 'after']]) {
      try {
        page(3, query!);
        throw new Error(`${query} passed`);
      } catch (error) {
        expect(GatewayError.is(error) && error.status === 400 && error.param).toBe(param!);
      }
    }
  });

  test('include: only the documented values; what it leaves out is null', () => {
    expect([...includeOf(new URLSearchParams('include[]=file_search_call.results&include=message.input_image.image_url'))].sort()).toEqual([
      'file_search_call.results',
      'message.input_image.image_url',
    ]);
    expect(() => includeOf(new URLSearchParams('include=everything'))).toThrow(/include/);
    const output = [{ id: 'fs_1', type: 'file_search_call', results: [{ file_id: 'f' }] }];
    expect(outputAsIncluded(output, new Set())).toEqual([{ id: 'fs_1', type: 'file_search_call', results: null }]);
    expect(outputAsIncluded(output, new Set(['file_search_call.results']))).toEqual(output);
    const input: JsonObject[] = [
      { id: 'm', type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] },
      { id: 'c', type: 'computer_call_output', output: { type: 'computer_screenshot', image_url: 'data:,' } },
    ];
    expect(inputAsIncluded(input, new Set())).toEqual([
      { id: 'm', type: 'message', role: 'user', content: [{ type: 'input_image', image_url: null }] },
      { id: 'c', type: 'computer_call_output', output: { type: 'computer_screenshot', image_url: null } },
    ]);
    expect(inputAsIncluded(input, new Set(['message.input_image.image_url', 'computer_call_output.output.image_url']))).toEqual(input);
  });
});
