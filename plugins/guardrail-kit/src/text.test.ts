import { expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { textOf } from './text.ts';

test('the Responses API: instructions and the input messages text; the answer output_text parts', () => {
  const request = buildGatewayRequest({
    endpoint: 'responses',
    body: {
      model: 'm',
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: 'First' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Second' }, { type: 'input_image', image_url: 'data:,' }] },
        { type: 'function_call_output', call_id: 'c', output: 'not judged' },
      ],
    },
  });
  expect(textOf({ request, phase: 'input' })).toBe('Be brief.\n\nFirst\n\nSecond');
  const responseBody: JsonObject = {
    output: [
      { type: 'reasoning', summary: [] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Answer', annotations: [] }] },
    ],
  };
  expect(textOf({ request, phase: 'output', responseBody })).toBe('Answer');
  expect(textOf({ request: buildGatewayRequest({ endpoint: 'responses', body: { model: 'm', input: 'Just this' } }), phase: 'input' })).toBe('Just this');
});
