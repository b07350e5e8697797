/** Output records of a Bedrock batch job → OpenAI batch outcomes: matched by record id, errors kept, damage reported. */
import { describe, expect, test } from 'bun:test';
import { inputRecords, positionOfRecord, recordIdOf, resultOfRecord } from './batch-records.ts';

const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const ctx = { customIds: ['first', 'second'], model: MODEL, strictWireCompliance: true, now: 1_700_000_000 };
const answer = { output: { message: { role: 'assistant', content: [{ text: 'Hello.' }] } }, stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } };

describe('record ids', () => {
  test('R and the position in ten digits, and back; other ids name no request', () => {
    expect(recordIdOf(2)).toBe('R0000000002');
    expect(positionOfRecord('R0000000002')).toBe(2);
    expect(positionOfRecord('CALL0000001')).toBeUndefined();
    expect(positionOfRecord(7)).toBeUndefined();
  });

  test('input records are numbered by position, whatever the input line numbers, without stream fields', () => {
    const text = inputRecords(
      [
        { line: 3, customId: 'a', body: { model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } } },
        { line: 9, customId: 'b', body: { model: MODEL, messages: [{ role: 'user', content: 'Yo' }] } },
      ],
      true,
    );
    expect(text.trim().split('\n').map((l) => JSON.parse(l))).toEqual([
      { recordId: 'R0000000001', modelInput: { messages: [{ role: 'user', content: [{ text: 'Hi' }] }] } },
      { recordId: 'R0000000002', modelInput: { messages: [{ role: 'user', content: [{ text: 'Yo' }] }] } },
    ]);
  });
});

describe('resultOfRecord', () => {
  test('a Converse answer is a chat completion for the custom_id of its position', () => {
    const result = resultOfRecord(JSON.stringify({ recordId: 'R0000000002', modelInput: {}, modelOutput: answer }), ctx);
    expect(result?.customId).toBe('second');
    expect(result?.response?.statusCode).toBe(200);
    expect(result?.response?.body).toMatchObject({
      object: 'chat.completion',
      created: 1_700_000_000,
      model: MODEL,
      choices: [{ message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
  });

  test("a record's error keeps its status; a status that is not an HTTP error is a 500", () => {
    const throttled = resultOfRecord(JSON.stringify({ recordId: 'R0000000001', error: { errorCode: 429, errorMessage: 'Too many tokens' } }), ctx);
    expect(throttled).toEqual({
      customId: 'first',
      response: { statusCode: 429, body: { error: { message: 'Too many tokens', type: 'rate_limit_error', param: null, code: null } } },
    });
    const odd = resultOfRecord(JSON.stringify({ recordId: 'R0000000001', error: { errorCode: 'ModelError', errorMessage: 'boom' } }), ctx);
    expect(odd?.response?.statusCode).toBe(500);
  });

  test('an answer that is not a Converse answer is a 502 error line, not a completion', () => {
    const result = resultOfRecord(JSON.stringify({ recordId: 'R0000000001', modelOutput: { output: {} } }), ctx);
    expect(result?.response?.statusCode).toBe(502);
    expect((result?.response?.body.error as { code: string }).code).toBe('upstream_invalid_response');
  });

  test('blank lines, broken JSON and records of no request of this batch are skipped', () => {
    expect(resultOfRecord('', ctx)).toBeUndefined();
    expect(resultOfRecord('{"recordId": "R00', ctx)).toBeUndefined();
    expect(resultOfRecord(JSON.stringify({ recordId: 'R0000000003', modelOutput: answer }), ctx)).toBeUndefined();
    expect(resultOfRecord(JSON.stringify({ recordId: 'other', modelOutput: answer }), ctx)).toBeUndefined();
  });
});
