import { describe, expect, test } from 'bun:test';
import { textHash } from './key.ts';
import { bestMatch, decodeIndex, dot, encodeIndex, LexicalEmbedder, type PartitionIndex, withItem } from './semantic.ts';
import { DEFAULTS } from './settings.ts';

const lex = new LexicalEmbedder();
const sim = (a: string, b: string) => dot(lex.embedOne(a), lex.embedOne(b));
const T = DEFAULTS.semanticThreshold;

describe('the local lexical embedding', () => {
  test('unit vectors, deterministic', () => {
    const v = lex.embedOne('What is the capital of France?');
    expect(v.length).toBe(LexicalEmbedder.DIMENSIONS);
    expect(dot(v, v)).toBeCloseTo(1, 5);
    expect(lex.embedOne('What is the capital of France?')).toEqual(v);
  });

  test('rewordings are above the default threshold, other questions below', () => {
    const q = 'What is the capital city of France?';
    for (const same of ['what is the capital city of france', 'Tell me: what is the capital city of France?', "What's the capital city of France?", 'Please, what is the capital city of France?'])
      expect(sim(q, same)).toBeGreaterThanOrEqual(T);
    for (const other of ['What is the capital city of Germany?', 'How do I bake sourdough bread at home?', 'What is the population of France?'])
      expect(sim(q, other)).toBeLessThan(T);
    expect(sim('Is it safe to take ibuprofen?', 'Is it not safe to take ibuprofen?')).toBeLessThan(T);
  });
});

function index(items: { key: string; texts: string[]; storedAt?: number; expiresAt?: number }[]): PartitionIndex {
  let idx: PartitionIndex | undefined;
  for (const it of items)
    idx = withItem(idx, lex.id, { key: it.key, storedAt: it.storedAt ?? 0, expiresAt: it.expiresAt ?? 10_000 }, it.texts.map(textHash), it.texts.map((t) => lex.embedOne(t)), 100, 0);
  return idx as PartitionIndex;
}

function match(idx: PartitionIndex, texts: string[], now = 0, notBefore = 0) {
  const vectors = texts.map((t) => lex.embedOne(t));
  return bestMatch(idx, texts.map(textHash), (i) => vectors[i] as Float32Array, T, notBefore, now);
}

describe('the partition index', () => {
  const system = 'You are a helpful geography assistant. Answer in one sentence.';

  test('every message must be similar: a long shared text does not hide a different question', () => {
    const idx = index([{ key: 'france', texts: [system, 'What is the capital city of France?'] }]);
    expect(match(idx, [system, 'what is the capital city of France']))?.toMatchObject({ item: { key: 'france' } });
    expect(match(idx, [system, 'What is the capital city of Germany?'])).toBeUndefined();
    expect(match(idx, ['You are a pirate. Answer in one sentence.', 'What is the capital city of France?'])).toBeUndefined();
  });

  test('expired and too old items are skipped; the best match wins', () => {
    const idx = index([
      { key: 'old', texts: ['What is the capital city of France?'], expiresAt: 50 },
      { key: 'new', texts: ['What is the capital city of France?'], storedAt: 10 },
    ]);
    expect(match(idx, ['What is the capital city of France?'], 0)?.item.key).toBe('new');
    expect(match(idx, ['What is the capital city of France?'], 100)?.item.key).toBe('new');
    expect(match(idx, ['What is the capital city of France?'], 100, 20)).toBeUndefined();
  });

  test('bounded, shared texts stored once, and the binary form round-trips', () => {
    let idx: PartitionIndex | undefined;
    for (let i = 0; i < 30; i++)
      idx = withItem(idx, lex.id, { key: `k${i}`, storedAt: i, expiresAt: 10_000 }, [textHash(system), textHash(`question ${i}`)], [lex.embedOne(system), lex.embedOne(`question ${i}`)], 10, 0);
    const full = idx as PartitionIndex;
    expect(full.items.map((it) => it.key)).toEqual(Array.from({ length: 10 }, (_, i) => `k${i + 20}`));
    expect(full.hashes.length).toBe(11); // the system prompt once, ten questions
    const bytes = encodeIndex(full);
    // unaligned, as a network buffer may be
    const shifted = new Uint8Array(bytes.byteLength + 1).subarray(1);
    shifted.set(bytes);
    const back = decodeIndex(shifted, lex.id) as PartitionIndex;
    expect(back.items).toEqual(full.items);
    expect(back.hashes).toEqual(full.hashes);
    expect([...(back.vectors[3] as Float32Array)]).toEqual([...(full.vectors[3] as Float32Array)]);
    expect(decodeIndex(bytes, 'another-embedder')).toBeUndefined();
    expect(decodeIndex(new Uint8Array([1, 2, 3]), lex.id)).toBeUndefined();
  });
});
