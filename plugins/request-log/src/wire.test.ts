import { describe, expect, test } from 'bun:test';
import { type QueuedEntry, withRowId } from './queued.ts';
import { toRow } from './row.ts';
import { testEntry } from './test-request.ts';
import { fromWirePart, toWirePart } from './wire.ts';

const enc = new TextEncoder();
const noBad = () => {
  throw new Error('no entry should be refused');
};

describe('wire form (what is posted to the writer thread)', () => {
  const entries: QueuedEntry[] = [
    testEntry(1, { requestBody: enc.encode('{"a":"é"}'), responseBody: '{"usage":{"prompt_tokens":1}}', metadata: { team: 'x' } }),
    testEntry(2, { requestBody: { model: 'm', n: 1 }, attempts: [{ index: 'config', providerId: 'p', retry: 0, status: 200, latencyMs: 1 }] }),
    testEntry(3, { requestBody: 'plain text' }),
    testEntry(4, { requestBody: enc.encode('x'.repeat(5000)) }),
    testEntry(5, { requestBody: new Uint8Array(3000), requestContentType: 'image/png' }),
    testEntry(6, { requestBody: enc.encode(''), spanId: 'span', errorMessage: 'boom' }),
    testEntry(7),
  ].map(withRowId);

  test('rows are the same as from the entries themselves', () => {
    const part = toWirePart(entries, 0, entries.length, 1024, noBad);
    const back = fromWirePart(structuredClone(part));
    expect(back.seqs).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(back.entries.map((e) => toRow(e, 1024))).toEqual(entries.map((e) => toRow(e, 1024)));
    // Each row's id, fixed at enqueue, crosses with it (a replay of the same entry must hit the same row).
    expect(back.entries.map((e) => e.rowId)).toEqual(entries.map((e) => e.rowId));
  });

  test('flat and cheap to clone: one JSON text without keys, response bodies beside it, byte bodies capped and packed into one buffer', () => {
    const part = toWirePart(entries, 0, entries.length, 1024, noBad);
    expect(part.pack!.byteLength).toBe(Buffer.byteLength('{"a":"é"}') + 1024);
    expect(Object.values(part).every((v) => typeof v === 'string' || Array.isArray(v) || v instanceof Uint8Array)).toBe(true);
    const rows = JSON.parse(part.json) as unknown[][];
    expect(rows.every(Array.isArray)).toBe(true);
    expect(part.json).not.toContain('traceId'); // positional: no keys
    expect(part.json).not.toContain('prompt_tokens'); // the response body travels outside the JSON
    expect(part.bodies).toBe('{"usage":{"prompt_tokens":1}}');
    expect(part.bodyLengths).toEqual([29, -1, -1, -1, -1, -1, -1]);
    expect(rows[1]![22]).toEqual({ model: 'm', n: 1 }); // a replaced body travels as the object
    const png = fromWirePart(part).entries[4]!;
    expect([png.requestBody, png.requestBodyBytes]).toEqual([new Uint8Array(0), 3000]); // non-text: its size only
  });

  test('a view into a larger buffer sends only its own bytes', () => {
    const backing = new Uint8Array(1_000_000).fill(65);
    const entry = withRowId(testEntry(1, { requestBody: backing.subarray(10, 20) }));
    const part = toWirePart([entry], 0, 1, 65_536, noBad);
    expect(part.pack!.buffer.byteLength).toBe(10);
    expect(toRow(fromWirePart(part).entries[0]!, 65_536).request_body).toBe('A'.repeat(10));
  });

  test('a range, entries left out, and an entry that cannot be converted (reported, not posted)', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const list = [testEntry(0), testEntry(1, { metadata: circular as Record<string, string>, responseBody: 'lost' }), testEntry(2), testEntry(3, { responseBody: 'kept' })].map(withRowId);
    const bad: number[] = [];
    const part = toWirePart(list, 1, 4, 1024, (seq) => bad.push(seq), (seq) => seq !== 2);
    expect(bad).toEqual([1]);
    const back = fromWirePart(part);
    expect(back.seqs).toEqual([3]);
    expect(back.entries.map((e) => [e.traceId, e.responseBody])).toEqual([['trace-3', 'kept']]);
  });
});
