import { describe, expect, test } from 'bun:test';
import { GatewayError, type JsonObject } from '@gateway/sdk';
import { guessMimeType, SKIP_THOUGHT_SIGNATURE, toGeminiRequest } from './request.ts';

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const weather = { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } };

function thrown(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('did not throw');
}

describe('toGeminiRequest: messages', () => {
  test('system and developer messages, wherever they stand, become systemInstruction', () => {
    const out = toGeminiRequest({
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'Be brief' },
        { role: 'user', content: 'Hi' },
        { role: 'developer', content: [{ type: 'text', text: 'Be kind' }] },
      ],
    });
    expect(out.systemInstruction).toEqual({ parts: [{ text: 'Be brief' }, { text: 'Be kind' }] });
    expect(out.contents).toEqual([{ role: 'user', parts: [{ text: 'Hi' }] }]);
    expect(out.model).toBeUndefined();
  });

  test('user and assistant turns become user and model contents, in order; same-role neighbours merge', () => {
    const out = toGeminiRequest({
      messages: [
        { role: 'user', content: 'One' },
        { role: 'user', content: 'One more' },
        { role: 'assistant', content: 'Two' },
        { role: 'user', content: 'Three' },
      ],
    });
    expect(out.contents).toEqual([
      { role: 'user', parts: [{ text: 'One' }, { text: 'One more' }] },
      { role: 'model', parts: [{ text: 'Two' }] },
      { role: 'user', parts: [{ text: 'Three' }] },
    ]);
  });

  test('images: data URLs become inlineData, http and gs URLs fileData with a guessed MIME type', () => {
    const out = toGeminiRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.webp?size=2' } },
            { type: 'image_url', image_url: { url: 'gs://bucket/photo' } },
          ],
        },
      ],
    });
    expect((out.contents as JsonObject[])[0]?.parts).toEqual([
      { text: 'Look' },
      { inlineData: { mimeType: 'image/png', data: PIXEL } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?size=2' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'gs://bucket/photo' } },
    ]);
  });

  test('audio and files: input_audio and file parts become inlineData or fileData', () => {
    const out = toGeminiRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'input_audio', input_audio: { data: 'AAAA', format: 'mp3' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
            { type: 'file', file: { file_id: 'https://generativelanguage.googleapis.com/v1beta/files/abc', filename: 'notes.txt' } },
          ],
        },
      ],
    });
    expect((out.contents as JsonObject[])[0]?.parts).toEqual([
      { inlineData: { mimeType: 'audio/mpeg', data: 'AAAA' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { fileData: { mimeType: 'text/plain', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } },
    ]);
  });

  test('a data URL without base64 is encoded', () => {
    const out = toGeminiRequest({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:text/plain,hello%20there' } }] }] });
    expect((out.contents as JsonObject[])[0]?.parts).toEqual([{ inlineData: { mimeType: 'text/plain', data: Buffer.from('hello there').toString('base64') } }]);
  });

  test('assistant tool_calls become functionCall parts; tool results functionResponse parts named after the call', () => {
    const out = toGeminiRequest({
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'user', content: 'weather and time' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'sig-1' } } },
            { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_b', content: '12:00' },
        { role: 'tool', tool_call_id: 'call_a', content: '{"temp":18}' },
      ],
    });
    expect(out.contents).toEqual([
      { role: 'user', parts: [{ text: 'weather and time' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking.' },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-1' },
          { functionCall: { name: 'get_time', args: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_time', response: { output: '12:00' } } },
          { functionResponse: { name: 'get_weather', response: { temp: 18 } } },
        ],
      },
    ]);
  });

  test('a Gemini 3 model gets the documented placeholder for a lost thought signature, on the first call only', () => {
    const body: JsonObject = {
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
            { id: 'c2', type: 'function', function: { name: 'g', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'x' },
        { role: 'tool', tool_call_id: 'c2', content: 'y' },
      ],
    };
    const three = toGeminiRequest({ ...body, model: 'gemini-3-pro-preview' });
    const parts = (three.contents as JsonObject[])[1]?.parts as JsonObject[];
    expect(parts[0]?.thoughtSignature).toBe(SKIP_THOUGHT_SIGNATURE);
    expect(parts[1]?.thoughtSignature).toBeUndefined();
    expect(parts[1]?.functionCall).toEqual({ name: 'g', args: {} });
    const two = toGeminiRequest({ ...body, model: 'gemini-2.5-flash' });
    expect(((two.contents as JsonObject[])[1]?.parts as JsonObject[])[0]?.thoughtSignature).toBeUndefined();
  });

  test('legacy function_call and function messages', () => {
    const out = toGeminiRequest({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '{"q":1}' } },
        { role: 'function', name: 'lookup', content: 'found' },
      ],
    });
    expect((out.contents as JsonObject[]).slice(1)).toEqual([
      { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 1 } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: 'found' } } }] },
    ]);
  });

  test('a tool result that answers no earlier call is a 400, as are bad arguments and unknown roles', () => {
    expect(thrown(() => toGeminiRequest({ messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }] })).status).toBe(400);
    const badArgs = thrown(() =>
      toGeminiRequest({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] }),
    );
    expect(badArgs.status).toBe(400);
    expect(badArgs.message).toContain('not valid JSON');
    expect(thrown(() => toGeminiRequest({ messages: [{ role: 'wizard', content: 'x' }] })).status).toBe(400);
    expect(thrown(() => toGeminiRequest({ messages: 'hi' })).status).toBe(400);
  });

  test('a tool message may name its function when the call is not in the history', () => {
    const out = toGeminiRequest({ messages: [{ role: 'tool', tool_call_id: 'x', name: 'f', content: [{ type: 'text', text: 'ok' }] }] });
    expect(out.contents).toEqual([{ role: 'user', parts: [{ functionResponse: { name: 'f', response: { output: 'ok' } } }] }]);
  });
});

describe('toGeminiRequest: tools and settings', () => {
  test('tools become functionDeclarations with a Gemini schema; a function without parameters sends none', () => {
    const out = toGeminiRequest({
      messages: [{ role: 'user', content: 'x' }],
      tools: [weather, { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } }],
      tool_choice: 'auto',
    });
    expect(out.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
          { name: 'now' },
        ],
      },
    ]);
    expect(out.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
  });

  test('tool_choice none / required / a named function', () => {
    const base = { messages: [{ role: 'user', content: 'x' }], tools: [weather] };
    expect(toGeminiRequest({ ...base, tool_choice: 'none' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(toGeminiRequest({ ...base, tool_choice: 'required' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(toGeminiRequest({ ...base, tool_choice: { type: 'function', function: { name: 'get_weather' } } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    });
    // no tools: no toolConfig
    expect(toGeminiRequest({ messages: base.messages, tool_choice: 'none' }).toolConfig).toBeUndefined();
  });

  test('legacy functions / function_call', () => {
    const out = toGeminiRequest({ messages: [{ role: 'user', content: 'x' }], functions: [weather.function], function_call: { name: 'get_weather' } });
    expect((out.tools as JsonObject[])[0]?.functionDeclarations).toHaveLength(1);
    expect(out.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });
  });

  test('sampling settings, stop, max tokens and n map into generationConfig', () => {
    const out = toGeminiRequest({
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 10,
      max_completion_tokens: 20,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      n: 2,
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      stop: 'END',
      logprobs: true,
      top_logprobs: 3,
      user: 'u-1',
      parallel_tool_calls: false,
    });
    expect(out.generationConfig).toEqual({
      maxOutputTokens: 20,
      temperature: 0.5,
      topP: 0.9,
      topK: 40,
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      responseLogprobs: true,
      logprobs: 3,
      stopSequences: ['END'],
    });
    expect(Object.keys(out).sort()).toEqual(['contents', 'generationConfig']);
  });

  test('response_format json_object and json_schema', () => {
    const messages = [{ role: 'user', content: 'x' }];
    expect(toGeminiRequest({ messages, response_format: { type: 'json_object' } }).generationConfig).toEqual({ responseMimeType: 'application/json' });
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    expect(toGeminiRequest({ messages, response_format: { type: 'json_schema', json_schema: { name: 'a', strict: true, schema } } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
    });
    expect(toGeminiRequest({ messages, response_format: { type: 'text' } }).generationConfig).toBeUndefined();
  });

  test('thinking: the budget always, thought summaries only when allowed', () => {
    const body = { messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens: 1024 } };
    expect(toGeminiRequest(body).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 1024 } });
    expect(toGeminiRequest(body, { includeThoughts: true }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
    expect(toGeminiRequest({ ...body, thinking: { type: 'disabled' } }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
  });

  test('Gemini-specific safety settings and cached content pass along', () => {
    const safety = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }];
    const out = toGeminiRequest({ messages: [{ role: 'user', content: 'x' }], safety_settings: safety, cached_content: 'cachedContents/abc' });
    expect(out.safetySettings).toEqual(safety);
    expect(out.cachedContent).toBe('cachedContents/abc');
  });

  test('never mutates the body it is given', () => {
    const body: JsonObject = {
      model: 'gemini-3-pro',
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"P"}' } }] },
        { role: 'tool', tool_call_id: 'a', content: 'r' },
      ],
      tools: [weather],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: ['string', 'null'] } } },
    };
    const before = structuredClone(body);
    toGeminiRequest(body);
    expect(body).toEqual(before);
  });
});

test('guessMimeType', () => {
  expect(guessMimeType('https://x/y/photo.PNG')).toBe('image/png');
  expect(guessMimeType('https://x/y/doc.pdf#page=2')).toBe('application/pdf');
  expect(guessMimeType('https://x/y/noext')).toBe('image/jpeg');
  expect(guessMimeType('https://x/y/noext', 'application/octet-stream')).toBe('application/octet-stream');
});
