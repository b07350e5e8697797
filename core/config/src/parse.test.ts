import { afterEach, describe, expect, test } from 'bun:test';
import { GatewayError, type GatewayConfig } from '@gateway/sdk';
import { clearConfigCache, parseConfigHeader, setSavedConfigResolver } from './parse.ts';
import { useWorkspaceFields } from './testing/workspace-fields.ts';

// The fields of this workspace's providers and strategies, as a gateway loading them assembles them.
useWorkspaceFields();

afterEach(() => {
  clearConfigCache();
});

/** The GatewayError thrown by `run` (fails the test if nothing or something else was thrown). */
function caught(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

function isDeeplyFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeeplyFrozen);
}

const FALLBACK = JSON.stringify({
  strategy: { mode: 'fallback' },
  targets: [
    { provider: 'openai', api_key: 'sk', override_params: { model: 'gpt-4o', stop: ['\n'] } },
    { virtual_key: 'vk', retry: { attempts: 2, on_status_codes: [429] } },
  ],
});

describe('parseConfigHeader', () => {
  test('parses a JSON config into a deeply frozen object', () => {
    const config = parseConfigHeader(FALLBACK);
    expect(config.strategy?.mode).toBe('fallback');
    expect(config.targets?.[1]?.retry?.attempts).toBe(2);
    expect(isDeeplyFrozen(config)).toBe(true);
    expect(() => {
      (config.targets as GatewayConfig[]).push({ virtual_key: 'x' });
    }).toThrow();
  });

  test('the same header value is parsed once: a cache hit returns the same frozen object', () => {
    const first = parseConfigHeader(FALLBACK);
    const second = parseConfigHeader(FALLBACK);
    expect(second).toBe(first);
    expect(Object.isFrozen(second)).toBe(true);
  });

  test('leading whitespace before the JSON object is allowed', () => {
    expect(parseConfigHeader('  {"virtual_key":"v"}').virtual_key).toBe('v');
  });

  test('malformed JSON is an invalid_config error', () => {
    const error = caught(() => parseConfigHeader('{"virtual_key": '));
    expect(error.code).toBe('invalid_config');
    expect(error.status).toBe(400);
    expect(error.message).toStartWith('Invalid config: config: not valid JSON');
    // The parser's message quotes the offending text (possibly a key); it is not repeated.
    const leaked = caught(() => parseConfigHeader('{"api_key": sk_live_0123456789}'));
    expect(leaked.message).not.toContain('sk_live');
  });

  test('an invalid config lists every violation; a repeated bad header fails the same way with a fresh error', () => {
    const header = JSON.stringify({ virtual_key: 'v', cb_config: { failure_threshold: 0, cooldown_interval: 1 }, extra: 1 });
    const first = caught(() => parseConfigHeader(header));
    expect(first.code).toBe('invalid_config');
    expect(first.toBody().error.type).toBe('invalid_config');
    expect(first.message).toBe(
      'Invalid config: extra: unknown property; cb_config.failure_threshold: must be >= 1; cb_config.cooldown_interval: must be >= 30000',
    );
    const second = caught(() => parseConfigHeader(header));
    expect(second.message).toBe(first.message);
    expect(second).not.toBe(first);
  });

  test('a __proto__ key is rejected and pollutes nothing', () => {
    const error = caught(() => parseConfigHeader('{"virtual_key":"v","__proto__":{"polluted":1}}'));
    expect(error.message).toBe('Invalid config: __proto__: forbidden key');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('an over-long header is refused before parsing', () => {
    const header = `{"virtual_key":"${'v'.repeat(300 * 1024)}"}`;
    expect(caught(() => parseConfigHeader(header)).message).toContain('config: longer than');
  });

  test('the cache is bounded (least recently used goes first)', () => {
    const header = (i: number) => JSON.stringify({ virtual_key: `vk-${i}` });
    const kept = parseConfigHeader(header(0));
    const evicted = parseConfigHeader(header(1));
    for (let i = 2; i <= 1000; i++) {
      parseConfigHeader(header(i));
      if (i % 100 === 0) parseConfigHeader(header(0)); // keeps entry 0 recent
    }
    expect(parseConfigHeader(header(0))).toBe(kept);
    const again = parseConfigHeader(header(1));
    expect(again).not.toBe(evicted);
    expect(again).toEqual(evicted);
  });
});

describe('saved config ids', () => {
  test('without a resolver, an id is an invalid_config error naming the config store', () => {
    const error = caught(() => parseConfigHeader('pc-abc-123'));
    expect(error.code).toBe('invalid_config');
    expect(error.message).toContain('saved configs are resolved by the config store');
  });

  test('a registered resolver supplies the config, frozen', () => {
    const saved: GatewayConfig = { retry: { attempts: 1 } };
    const unset = setSavedConfigResolver((id) => (id === 'pc-1' ? saved : undefined));
    const config = parseConfigHeader('pc-1');
    expect(config).toBe(saved);
    expect(isDeeplyFrozen(config)).toBe(true);
    const error = caught(() => parseConfigHeader('pc-2'));
    expect(error.message).toBe('Invalid config: config: no saved config with id "pc-2"');
    unset();
    expect(caught(() => parseConfigHeader('pc-1')).message).toContain('saved configs are resolved by the config store');
  });

  test('an empty header is invalid', () => {
    expect(caught(() => parseConfigHeader('  ')).message).toBe('Invalid config: config: empty');
  });
});

test('fuzz: random header strings either parse or throw invalid_config, never anything else', () => {
  let seed = 7;
  const rand = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 4294967296;
  };
  const pieces = ['{', '}', '[', ']', '"', ':', ',', 'virtual_key', '"v"', '1', 'null', 'targets', '"__proto__"', ' ', '\\'];
  for (let i = 0; i < 500; i++) {
    let text = rand() < 0.5 ? '{"virtual_key":"v"' : '{';
    for (let n = Math.floor(rand() * 12); n > 0; n--) text += pieces[Math.floor(rand() * pieces.length)];
    try {
      const config = parseConfigHeader(text);
      expect(Object.isFrozen(config)).toBe(true);
    } catch (error) {
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).code).toBe('invalid_config');
    }
  }
});
