import { describe, expect, test } from 'bun:test';
import type { JsonObject, TargetConfig } from '@gateway/sdk';
import { applyParamRules } from './params.ts';

/** A deep copy to compare against after the call: the input must come out exactly as it went in. */
const snapshot = (value: JsonObject) => structuredClone(value);

function apply(body: JsonObject, target: TargetConfig): JsonObject {
  const before = snapshot(body);
  const out = applyParamRules(body, target);
  expect(body).toEqual(before); // never mutated, at any depth
  return out;
}

const chat = (): JsonObject => ({
  model: 'gpt-4o',
  temperature: 0.2,
  user: 'u-1',
  messages: [
    { role: 'system', content: 'be brief', name: 'sys' },
    { role: 'user', content: 'hi', name: 'alice' },
  ],
  tools: [
    { type: 'function', function: { name: 'a', strict: true, parameters: { type: 'object' } } },
    { type: 'function', function: { name: 'b', strict: false } },
  ],
  response_format: { type: 'json_schema', json_schema: { name: 's', strict: true, schema: {} } },
  metadata: { 'a.b': 1, 'c': 2 },
});

describe('applyParamRules: no rules', () => {
  test('returns the very same object when no rule applies (so the raw bytes can be sent)', () => {
    const body = chat();
    expect(applyParamRules(body, {})).toBe(body);
    expect(applyParamRules(body, { default_params: { model: 'other' } })).toBe(body); // client sent model
    expect(applyParamRules(body, { drop_params: ['not_there', 'messages[9]', 'tools[0].nope'] })).toBe(body);
    expect(applyParamRules(body, { override_params: {} })).toBe(body);
  });
});

describe('applyParamRules: default_params', () => {
  test('fill only what the client left out', () => {
    const out = apply(chat(), { default_params: { model: 'default-model', max_tokens: 100, seed: 7 } });
    expect(out.model).toBe('gpt-4o');
    expect(out.max_tokens).toBe(100);
    expect(out.seed).toBe(7);
  });

  test('a nested default is a whole value: it fills a missing key and leaves a present object alone', () => {
    const out = apply(chat(), { default_params: { response_format: { type: 'text' }, stream_options: { include_usage: true } } });
    expect(out.response_format).toEqual(chat().response_format);
    expect(out.stream_options).toEqual({ include_usage: true });
  });

  test('a client value of null counts as sent', () => {
    const out = apply({ model: 'm', temperature: null }, { default_params: { temperature: 1 } });
    expect(out.temperature).toBeNull();
  });
});

describe('applyParamRules: override_params', () => {
  test('replace what the client sent and add what it did not', () => {
    const out = apply(chat(), { override_params: { model: 'forced', temperature: 0, logit_bias: { '50256': -100 } } });
    expect(out.model).toBe('forced');
    expect(out.temperature).toBe(0);
    expect(out.logit_bias).toEqual({ '50256': -100 });
    expect(out.messages).toEqual(chat().messages);
  });

  test('win over default_params for the same key', () => {
    const out = apply({ messages: [] }, { default_params: { model: 'd' }, override_params: { model: 'o' } });
    expect(out.model).toBe('o');
  });

  test('a nested override replaces the whole top-level value', () => {
    const out = apply(chat(), { override_params: { response_format: { type: 'json_object' } } });
    expect(out.response_format).toEqual({ type: 'json_object' });
  });

  test('the override value object is not shared by reference with later mutation of the body by the caller', () => {
    const overrides = { stop: ['\n'] };
    const out = applyParamRules({ model: 'm' }, { override_params: overrides });
    expect(out.stop).toEqual(['\n']);
    expect(overrides).toEqual({ stop: ['\n'] });
  });
});

describe('applyParamRules: drop_params', () => {
  test('a top-level key', () => {
    const out = apply(chat(), { drop_params: ['user'] });
    expect('user' in out).toBe(false);
    expect(out.model).toBe('gpt-4o');
  });

  test('a nested key', () => {
    const out = apply(chat(), { drop_params: ['response_format.json_schema.strict'] });
    expect(out.response_format).toEqual({ type: 'json_schema', json_schema: { name: 's', schema: {} } });
  });

  test('a key inside an array item by index', () => {
    const out = apply(chat(), { drop_params: ['messages[1].name'] });
    expect(out.messages).toEqual([
      { role: 'system', content: 'be brief', name: 'sys' },
      { role: 'user', content: 'hi' },
    ]);
  });

  test('an array item by index is removed from the array', () => {
    const out = apply(chat(), { drop_params: ['messages[0]'] });
    expect(out.messages).toEqual([{ role: 'user', content: 'hi', name: 'alice' }]);
  });

  test('`[*]` removes the key from every item', () => {
    const out = apply(chat(), { drop_params: ['tools[*].function.strict'] });
    expect(out.tools).toEqual([
      { type: 'function', function: { name: 'a', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'b' } },
    ]);
  });

  test('`[*]` over items where only some have the key', () => {
    const out = apply(chat(), { drop_params: ['messages[*].name'] });
    expect(out.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ]);
    const partial = apply({ messages: [{ role: 'user', name: 'x' }, { role: 'user' }, 'text'] }, { drop_params: ['messages[*].name'] });
    expect(partial.messages).toEqual([{ role: 'user' }, { role: 'user' }, 'text']);
  });

  test('a trailing `[*]` empties the array', () => {
    const out = apply(chat(), { drop_params: ['tools[*]'] });
    expect(out.tools).toEqual([]);
  });

  test('`["a.b"]` addresses a key that contains a dot', () => {
    const out = apply(chat(), { drop_params: ['metadata["a.b"]'] });
    expect(out.metadata).toEqual({ c: 2 });
    const top = apply({ 'x.y': 1, x: { y: 2 } }, { drop_params: ['["x.y"]'] });
    expect(top).toEqual({ x: { y: 2 } });
    const dotted = apply({ 'x.y': 1, x: { y: 2 } }, { drop_params: ['x.y'] });
    expect(dotted).toEqual({ 'x.y': 1, x: {} });
  });

  test('a path of the wrong shape changes nothing: an index on an object, a key on an array, a path through a scalar', () => {
    const body = chat();
    expect(applyParamRules(body, { drop_params: ['response_format[0]', 'messages.role', 'model.length', 'temperature[*]'] })).toBe(body);
  });

  test('an invalid path is ignored', () => {
    const body = chat();
    expect(applyParamRules(body, { drop_params: ['messages[', '__proto__', 'a..b'] })).toBe(body);
  });

  test('several drops apply in order; an index drop sees the array as earlier drops left it', () => {
    const out = apply(chat(), { drop_params: ['messages[0]', 'messages[0].name', 'user', 'tools'] });
    expect(out.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect('user' in out).toBe(false);
    expect('tools' in out).toBe(false);
  });

  test('parts of the body that no rule touched are shared, not copied', () => {
    const body = chat();
    const out = applyParamRules(body, { drop_params: ['messages[1].name'] });
    expect(out).not.toBe(body);
    expect(out.tools).toBe(body.tools);
    expect((out.messages as JsonObject[])[0]).toBe((body.messages as JsonObject[])[0]);
  });

  test('drops apply after overrides and defaults (a dropped key stays dropped)', () => {
    const out = apply({ model: 'm' }, { default_params: { user: 'x' }, override_params: { seed: 1 }, drop_params: ['user', 'seed'] });
    expect(out).toEqual({ model: 'm' });
  });

  test('a frozen body (configs and bodies may be frozen) is not touched', () => {
    const deepFreeze = (v: unknown): unknown => {
      if (v && typeof v === 'object') {
        for (const child of Object.values(v)) deepFreeze(child);
        Object.freeze(v);
      }
      return v;
    };
    const body = deepFreeze(chat()) as JsonObject;
    const out = applyParamRules(body, {
      default_params: { seed: 1 },
      override_params: { model: 'x' },
      drop_params: ['tools[*].function.strict', 'messages[0]', 'metadata["a.b"]'],
    });
    expect(out.model).toBe('x');
    expect((out.tools as JsonObject[]).every((t) => !('strict' in (t.function as JsonObject)))).toBe(true);
    expect(out.messages as JsonObject[]).toHaveLength(1);
  });
});
