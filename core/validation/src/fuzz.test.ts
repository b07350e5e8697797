/**
 * Deterministic fuzzing: valid bodies mutated with hostile types and values. The only acceptable outcomes are
 * "passes" or a GatewayError with status 400; a TypeError, a stack overflow or a 500 would fail the run.
 */
import { describe, expect, test } from 'bun:test';
import { GatewayError } from '@gateway/sdk';
import { validateBody, type BodyEndpoint } from './index.ts';

type Json = unknown;
type Container = Record<string, Json> | Json[];

/** mulberry32: tiny seeded PRNG, so a failure can be replayed from its seed and index. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Dice {
  constructor(readonly next: () => number) {}
  int(below: number): number {
    return Math.floor(this.next() * below);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const tool = () => ({ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } });
const BASES: Record<BodyEndpoint, readonly (() => Record<string, Json>)[]> = {
  chatComplete: [
    () => ({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }),
    () => ({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function' }] },
        { role: 'tool', content: '42', tool_call_id: 'c' },
      ],
      tools: [tool()],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      logprobs: true,
      top_logprobs: 3,
      logit_bias: { '50256': -100 },
      stop: ['\n', 'END'],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 1,
      top_p: 0.9,
      n: 2,
      seed: 7,
      response_format: { type: 'json_object' },
      thinking: { type: 'enabled', budget_tokens: 1024 },
      functions: [{ name: 'f' }],
      function_call: 'auto',
    }),
  ],
  complete: [
    () => ({ model: 'instruct', prompt: 'Say hi' }),
    () => ({
      model: 'instruct',
      prompt: [[1, 2, 3], [4]],
      best_of: 3,
      n: 2,
      echo: true,
      logprobs: 5,
      max_tokens: 16,
      stop: 'END',
      suffix: '.',
      logit_bias: { '1': 5 },
      temperature: 0,
      user: 'u',
    }),
  ],
  embed: [
    () => ({ model: 'text-embedding-3-small', input: 'hello' }),
    () => ({ model: 'e', input: ['a', 'b', 'c'], dimensions: 256, encoding_format: 'base64', user: 'u' }),
    () => ({ model: 'e', input: [[1, 2], [3, 4]] }),
  ],
  moderate: [
    () => ({ input: 'text' }),
    () => ({ input: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: 'u' } }], model: 'm' }),
  ],
  messages: [
    () => ({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }),
    () => ({
      model: 'm',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'lookup', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: '42' }] },
      ],
      tools: [{ name: 'lookup', input_schema: { type: 'object' } }],
      stream: true,
    }),
  ],
  countTokens: [() => ({ model: 'm', messages: [{ role: 'user', content: 'Hi' }], system: 'S' })],
  responses: [
    () => ({ model: 'gpt-4o', input: 'Hi' }),
    () => ({
      model: 'gpt-4o',
      instructions: 'Be brief.',
      input: [{ role: 'user', content: 'Hi' }, { type: 'function_call_output', call_id: 'c', output: '42' }],
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }],
      metadata: { a: 'b' },
      temperature: 1,
      top_p: 0.5,
      truncation: 'disabled',
    }),
  ],
};

const KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'messages', 'role',
  'type', 'function', 'name', 'input', 'model', 'stream', 'n', 'best_of', '', 'a/b', 'a~b', '0', '-1'];
const SCALARS: readonly Json[] = [null, true, false, 0, -0, 1, -1, 0.5, 2, 20, 21, 128, 129, 2048, 1e308, -1e308,
  Number.MAX_SAFE_INTEGER + 2, 2 ** 63, -(2 ** 64), Number.MIN_VALUE, NaN, Infinity, -Infinity, 'NaN', 'Infinity',
  '-0', '1e999', '', ' ', '\u0000', '😀', '__proto__', 'user', 'function', 'none', 'auto', 'required', 'float',
  'enabled', 'text', 'x'.repeat(10_000)];

/** Nesting built with a loop, deep enough that a validator recursing into unknown values would overflow. */
function deepNest(dice: Dice): Json {
  let value: Json = dice.pick(SCALARS);
  const depth = 1 + dice.int(2000);
  const asArray = dice.chance(0.5);
  for (let i = 0; i < depth; i++) value = asArray ? [value] : { a: value };
  return value;
}

function setOwn(target: Container, key: string, value: Json): void {
  // defineProperty makes `__proto__` an own key, as JSON.parse does, instead of changing the prototype.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function randomValue(dice: Dice, depth = 0): Json {
  const roll = dice.int(10);
  if (roll < 5 || depth > 3) return dice.pick(SCALARS);
  if (roll === 5) return deepNest(dice);
  if (roll === 6) return Array.from({ length: dice.pick([0, 1, 5, 129, 2049]) }, () => dice.pick(SCALARS));
  if (roll === 7) return Array.from({ length: dice.int(4) }, () => randomValue(dice, depth + 1));
  const object: Record<string, Json> = {};
  for (let i = dice.int(4); i > 0; i--) setOwn(object, dice.pick(KEYS), randomValue(dice, depth + 1));
  return object;
}

/** Up to 2000 (container, key) slots, shallow first, so deep nests do not swamp the choice. */
function slots(root: Container): [Container, string][] {
  const found: [Container, string][] = [];
  const queue: [Container, number][] = [[root, 0]];
  for (let next = 0; next < queue.length && found.length < 2000; next++) {
    const [node, depth] = queue[next]!;
    for (const key of Object.keys(node)) {
      found.push([node, key]);
      const child = (node as Record<string, Json>)[key];
      if (depth < 8 && typeof child === 'object' && child !== null) queue.push([child as Container, depth + 1]);
    }
  }
  return found;
}

function mutate(dice: Dice, body: Record<string, Json>): Json {
  for (let i = 1 + dice.int(4); i > 0; i--) {
    const all = slots(body);
    const [node, key] = all.length > 0 ? dice.pick(all) : [body, 'x'];
    const action = dice.int(6);
    if (action <= 2) setOwn(node, key, randomValue(dice));
    else if (action === 3) delete (node as Record<string, Json>)[key];
    else if (action === 4) {
      const child = (node as Record<string, Json>)[key];
      const target = typeof child === 'object' && child !== null ? (child as Container) : node;
      setOwn(target, Array.isArray(target) ? String(target.length) : dice.pick(KEYS), randomValue(dice));
    } else setOwn(node, key, deepNest(dice));
  }
  if (dice.chance(0.02)) return randomValue(dice); // the whole body is not an object
  // Some bodies go through JSON, the form the server really hands over (NaN becomes null, own __proto__ kept).
  return dice.chance(0.3) ? JSON.parse(JSON.stringify(body)) : body;
}

type Outcome = 'ok' | `400 ${string}` | `BAD ${string}`;

function outcome(endpoint: BodyEndpoint, body: Json): Outcome {
  try {
    validateBody(endpoint, body);
    return 'ok';
  } catch (error) {
    if (!(error instanceof GatewayError)) return `BAD ${String(error)}`;
    const prefixed = error.param === null || error.message.startsWith(`${error.param}: `);
    const ok = error.status === 400 && error.code === 'invalid_request' && prefixed;
    if (!ok) return `BAD ${error.status} ${error.message}`;
    return `400 ${error.param}`;
  }
}

const RUNS = 3000;

function campaign(endpoint: BodyEndpoint, seed: number, runs: number): Outcome[] {
  const dice = new Dice(prng(seed));
  const bases = BASES[endpoint];
  return Array.from({ length: runs }, () => outcome(endpoint, mutate(dice, dice.pick(bases)())));
}

describe('fuzz', () => {
  for (const [index, endpoint] of (['chatComplete', 'complete', 'embed', 'moderate', 'messages', 'countTokens', 'responses'] as const).entries()) {
    test(`${endpoint}: ${RUNS} mutated bodies either pass or get a 400`, () => {
      const prototypeKeys = Object.getOwnPropertyNames(Object.prototype);
      const outcomes = campaign(endpoint, 0xc0ffee + index, RUNS);
      expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeKeys);
      const bad = outcomes.flatMap((result, i) => (result.startsWith('BAD') ? [`#${i}: ${result}`] : []));
      expect(bad).toEqual([]);
      // Both outcomes must be common, or the mutations are not exercising the validator.
      const passed = outcomes.filter((result) => result === 'ok').length;
      expect(passed).toBeGreaterThan(RUNS * 0.05);
      expect(RUNS - passed).toBeGreaterThan(RUNS * 0.3);
    }, 30_000);
  }

  test('the campaign is deterministic', () => {
    expect(campaign('chatComplete', 42, 300)).toEqual(campaign('chatComplete', 42, 300));
  }, 30_000);
});
