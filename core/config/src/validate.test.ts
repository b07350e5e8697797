import { describe, expect, test } from 'bun:test';
import { validateConfig } from './validate.ts';
import { parseParamPath, WILDCARD } from '@gateway/sdk';
import { useWorkspaceFields } from './testing/workspace-fields.ts';

// The fields of this workspace's providers and strategies, as a gateway loading them assembles them.
useWorkspaceFields();

/** The violations of an invalid config (fails the test if it was valid). */
function violationsOf(value: unknown): string[] {
  const result = validateConfig(value);
  if (result.ok) throw new Error(`expected violations for ${JSON.stringify(value)}`);
  return result.violations;
}
function expectValid(value: unknown): void {
  const result = validateConfig(value);
  expect(result.ok ? [] : result.violations).toEqual([]);
}

const target = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: 'sk-test', ...extra });
const svcBManaged = {
  provider: 'svc-b',
  svcB_deployment_name: 'dep',
  svcB_deployment_type: 'managed',
  svcB_region: 'eu',
  svcB_api_version: '2024-01-01',
};

/** One valid config per property set of SPEC.md, in its order, plus the two equivalent forms we accept. */
const PROPERTY_SET_EXAMPLES: Record<string, Record<string, unknown>> = {
  'provider+api_key': { provider: 'openai', api_key: 'sk-1' },
  'provider+custom_host': { provider: 'ollama', custom_host: 'http://localhost:11434' },
  virtual_key: { virtual_key: 'vk-1' },
  'strategy+targets': { strategy: { mode: 'single' }, targets: [target()] },
  cache: { cache: { mode: 'simple', max_age: 60 } },
  retry: { retry: { attempts: 3, on_status_codes: [429, 503], use_retry_after_headers: true } },
  prompt_id: { prompt_id: 'pp-1' },
  forward_headers: { forward_headers: ['x-custom', 'X-Trace'] },
  request_timeout: { request_timeout: 5000 },
  'provider+svcA': { provider: 'bedrock', svcA_access_key_id: 'AK', svcA_secret_access_key: 'SK', svcA_region: 'us-east-1', svcA_session_token: 't' },
  'provider+svcC json': { provider: 'vertex-ai', svcC_region: 'us-central1', svcC_service_account_json: { type: 'service_account', private_key: 'k' } },
  'provider+svcC project': { provider: 'vertex-ai', svcC_region: 'us-central1', svcC_project_id: 'proj' },
  'provider+svcB deployment': svcBManaged,
  'provider+svcB endpoint': { provider: 'svc-b', svcB_endpoint_name: 'ep', svcB_deployment_type: 'serverless' },
  after_request_hooks: {
    after_request_hooks: [
      {
        id: 'out-check',
        type: 'guardrail',
        async: true,
        checks: [{ id: 'default.regexMatch', parameters: { rule: '\\d+' } }],
        on_fail: { feedback: { value: -1, weight: 1, metadata: { why: 'digits' } } },
        on_success: { feedback: { value: 1 } },
      },
    ],
  },
  before_request_hooks: {
    before_request_hooks: [
      { id: 'in-check', checks: [{ id: 'default.wordCount', parameters: { min: 1 } }], on_fail: { deny: true, feedback: { value: 0 } } },
    ],
  },
  input_guardrails: { input_guardrails: ['gr-saved', { id: 'inline', deny: true, 'default.contains': { words: ['x'] }, on_fail: { feedback: { value: 1 } } }] },
  output_guardrails: { output_guardrails: [{ async: true, 'default.jsonSchema': { schema: {} }, on_fail: { deny: false, feedback: { weight: 2 } } }] },
  passthrough: { passthrough: true, custom_host: 'https://llm.internal.example/v1' },
  'provider+Authorization': { provider: 'openai', Authorization: 'Bearer sk-x' },
  'provider+svcB_entra_tenant_id+svcB_entra_client_id+svcB_entra_client_secret': { provider: 'azure-openai', svcB_entra_tenant_id: 't', svcB_entra_client_id: 'c', svcB_entra_client_secret: 's' },
  '@slug provider': { provider: '@openai-prod' },
};

describe('valid configs', () => {
  for (const [set, config] of Object.entries(PROPERTY_SET_EXAMPLES)) {
    test(`property set ${set}`, () => expectValid(config));
  }

  test('returns the same object it was given', () => {
    const config = { virtual_key: 'vk' };
    const result = validateConfig(config);
    expect(result.ok && result.config).toBe(config);
  });

  test('every remaining field of the table', () => {
    expectValid({
      name: 'root',
      provider: 'azure-openai',
      api_key: 'k',
      strict_wire_compliance: false,
      override_params: { model: 'gpt-4o', temperature: 0.2, logit_bias: { '50256': -100 }, stop: ['\n'] },
      default_params: { max_tokens: 100 },
      drop_params: ['user', 'response_format.json_schema.strict', 'messages[0].name', 'tools[*].function.strict', '["a.b"]', 'x["y.z"][2]'],
      request_timeout: 1,
      cache: { mode: 'semantic' },
      cb_config: { failure_threshold: 1, cooldown_interval: 30000, failure_status_codes: [500, 502] },
      weight: 0,
      on_status_codes: [429],
      resource_name: 'res',
      deployment_id: 'dep',
      api_version: '2024-02-01',
      deployments: [{ deployment_id: 'd1', alias: 'gpt4', api_version: 'v1', is_default: true }],
      svcD_organization: 'org',
      svcD_project: 'proj',
      svcB_entra_scope: 'scope',
      svcB_resource_name: 'r',
      svcB_deployment_id: 'd',
      svcB_model_name: 'm',
      svcB_deployment_type: 'serverless',
      Authorization: 'Bearer x',
    });
  });

  test('nested targets three levels deep, every strategy mode', () => {
    expectValid({
      strategy: { mode: 'fallback', on_status_codes: [429, 500] },
      retry: { attempts: 2 },
      targets: [
        {
          strategy: { mode: 'loadbalance' },
          targets: [
            { provider: 'openai', api_key: 'a', weight: 0.7 },
            {
              weight: 0.3,
              strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'pro' }], default: 'free' },
              targets: [
                { name: 'pro', provider: 'anthropic', api_key: 'b', override_params: { model: 'claude' } },
                { name: 'free', virtual_key: 'vk-free' },
              ],
            },
          ],
        },
        { provider: '@backup', on_status_codes: [503] },
      ],
    });
  });

  test('targets whose credentials come from the request or the store', () => {
    expectValid({
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'ollama', custom_host: 'http://localhost:11434' },
        { provider: 'openai', Authorization: 'Bearer sk' },
        { provider: '@team-openai' },
        { passthrough: true },
        { provider: 'openai', virtual_key: 'vk' },
        svcBManaged,
      ],
    });
  });
});

describe('unknown properties are rejected at every depth', () => {
  const cases: [string, unknown, string][] = [
    ['root', { virtual_key: 'v', bogus: 1 }, 'bogus: unknown property'],
    ['strategy', { strategy: { mode: 'single', bogus: 1 }, targets: [target()] }, 'strategy.bogus: unknown property'],
    ['retry', { retry: { attempts: 1, bogus: 1 } }, 'retry.bogus: unknown property'],
    ['cache', { cache: { mode: 'simple', bogus: 1 } }, 'cache.bogus: unknown property'],
    ['cb_config', { virtual_key: 'v', cb_config: { failure_threshold: 1, cooldown_interval: 30000, bogus: 1 } }, 'cb_config.bogus: unknown property'],
    [
      'a target two deep',
      { strategy: { mode: 'fallback' }, targets: [{ strategy: { mode: 'single' }, targets: [target({ bogus: 1 })] }] },
      'targets[0].targets[0].bogus: unknown property',
    ],
    ['a hook', { before_request_hooks: [{ id: 'h', bogus: 1 }] }, 'before_request_hooks[0].bogus: unknown property'],
    ['a hook check', { after_request_hooks: [{ id: 'h', checks: [{ id: 'c', parameters: {}, bogus: 1 }] }] }, 'after_request_hooks[0].checks[0].bogus: unknown property'],
    ['a deployment', { virtual_key: 'v', deployments: [{ deployment_id: 'd', alias: 'a', api_version: 'v', bogus: 1 }] }, 'deployments[0].bogus: unknown property'],
    ['a condition', { strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a', bogus: 1 }], default: 'a' }, targets: [target({ name: 'a' })] }, 'strategy.conditions[0].bogus: unknown property'],
    ['hook feedback', { before_request_hooks: [{ id: 'h', on_fail: { feedback: { bogus: 1 } } }] }, 'before_request_hooks[0].on_fail.feedback.bogus: unknown property'],
    ['a key needing brackets', { virtual_key: 'v', 'odd key': 1 }, '["odd key"]: unknown property'],
  ];
  for (const [where, config, violation] of cases) {
    test(where, () => expect(violationsOf(config)).toEqual([violation]));
  }
});

describe('schema violations', () => {
  test('cb_config minimums and required fields', () => {
    expect(violationsOf({ virtual_key: 'v', cb_config: { failure_threshold: 0, cooldown_interval: 29999 } })).toEqual([
      'cb_config.failure_threshold: must be >= 1',
      'cb_config.cooldown_interval: must be >= 30000',
    ]);
    expect(violationsOf({ virtual_key: 'v', cb_config: {} })).toEqual([
      'cb_config.failure_threshold: is required',
      'cb_config.cooldown_interval: is required',
    ]);
    expect(
      violationsOf({ strategy: { mode: 'fallback' }, targets: [target(), target({ cb_config: { failure_threshold: 1, cooldown_interval: 5 } })] }),
    ).toEqual(['targets[1].cb_config.cooldown_interval: must be >= 30000']);
  });

  test('svcB_deployment_type enum', () => {
    expect(violationsOf({ ...svcBManaged, svcB_deployment_type: 'dedicated' })).toEqual([
      'svcB_deployment_type: must be one of: serverless, managed',
    ]);
  });

  test('strategy mode and cache mode enums', () => {
    expect(violationsOf({ strategy: { mode: 'random' }, targets: [target()] })).toEqual([
      'strategy.mode: must be one of: single, loadbalance, fallback, conditional',
    ]);
    expect(violationsOf({ cache: { mode: 'fuzzy' } })).toEqual(['cache.mode: must be one of: simple, semantic']);
  });

  test('request_timeout is a positive integer; weight is not negative', () => {
    expect(violationsOf({ request_timeout: 0 })).toEqual(['request_timeout: must be >= 1']);
    expect(violationsOf({ request_timeout: 1.5 })).toEqual(['request_timeout: must be an integer']);
    expect(violationsOf({ request_timeout: '100' })).toEqual(['request_timeout: must be an integer']);
    expect(violationsOf({ strategy: { mode: 'loadbalance' }, targets: [target({ weight: -1 })] })).toEqual([
      'targets[0].weight: must be >= 0',
    ]);
  });

  test('wrong types and required fields inside hooks, deployments, retry', () => {
    expect(violationsOf({ retry: {} })).toEqual(['retry.attempts: is required']);
    expect(violationsOf({ before_request_hooks: [{ checks: [{ id: 'c' }] }] })).toEqual([
      'before_request_hooks[0].id: is required',
      'before_request_hooks[0].checks[0].parameters: is required',
    ]);
    expect(violationsOf({ virtual_key: 'v', deployments: [{ deployment_id: 'd', api_version: 'v' }] })).toEqual([
      'deployments[0].alias: is required',
    ]);
    expect(violationsOf({ virtual_key: 'v', svcC_service_account_json: 'json-string' })).toEqual([
      'svcC_service_account_json: must be an object',
    ]);
    expect(violationsOf({ virtual_key: 'v', override_params: [] })).toEqual(['override_params: must be an object']);
  });

  test('deny only where the spec allows it', () => {
    expect(violationsOf({ after_request_hooks: [{ id: 'h', on_fail: { deny: true } }] })).toEqual([
      'after_request_hooks[0].on_fail.deny: unknown property',
    ]);
    expect(violationsOf({ before_request_hooks: [{ id: 'h', async: true }] })).toEqual([
      'before_request_hooks[0].async: unknown property',
    ]);
    expect(violationsOf({ input_guardrails: [{ on_fail: { deny: true } }] })).toEqual([
      'input_guardrails[0].on_fail.deny: unknown property',
    ]);
  });

  test('guardrail entries: strings or objects whose extra properties are checks', () => {
    expect(violationsOf({ input_guardrails: [42, { id: 7, 'default.regexMatch': 'not-an-object' }] })).toEqual([
      'input_guardrails[0]: must be a string or an object',
      'input_guardrails[1]["default.regexMatch"]: must be an object',
      'input_guardrails[1].id: must be a string',
    ]);
  });

  test('root must be an object', () => {
    for (const value of [null, 1, 'x', [], true, undefined]) {
      expect(violationsOf(value)).toEqual(['config: must be a JSON object']);
    }
  });
});

describe('cross-field rules', () => {
  const SETS_PREFIX = 'must contain at least one of these property sets: provider+api_key, provider+custom_host';

  test('a config with none of the property sets, at the root and in a target', () => {
    const [root] = violationsOf({ name: 'x' });
    expect(root?.startsWith(`config: ${SETS_PREFIX}`)).toBe(true);
    const nested = violationsOf({ strategy: { mode: 'fallback' }, targets: [target(), { name: 'empty', weight: 1 }] });
    expect(nested).toHaveLength(1);
    expect(nested[0]?.startsWith(`targets[1]: ${SETS_PREFIX}`)).toBe(true);
  });

  test('strategy and targets require each other; targets is not empty', () => {
    expect(violationsOf({ strategy: { mode: 'single' }, retry: { attempts: 1 } })).toEqual(['targets: required when strategy is set']);
    expect(violationsOf({ targets: [target()], retry: { attempts: 1 } })).toEqual(['strategy: required when targets is set']);
    expect(violationsOf({ strategy: { mode: 'single' }, targets: [] })).toEqual(['targets: must not be empty']);
    expect(
      violationsOf({ strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'v', strategy: { mode: 'single' } }] }),
    ).toEqual(['targets[0].targets: required when strategy is set']);
  });

  test('conditional mode needs conditions and default, naming targets', () => {
    const targets = [target({ name: 'a' }), target({ name: 'b' })];
    expect(violationsOf({ strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a' }] }, targets })).toEqual([
      'strategy.default: required when mode is conditional',
    ]);
    expect(violationsOf({ strategy: { mode: 'conditional', default: 'a' }, targets })).toEqual([
      'strategy.conditions: required when mode is conditional',
    ]);
    expect(
      violationsOf({ strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a' }, { query: {}, then: 'c' }], default: 'z' }, targets }),
    ).toEqual(['strategy.conditions[1].then: names no target ("c")', 'strategy.default: names no target ("z")']);
    expect(violationsOf({ strategy: { mode: 'conditional', conditions: [{ then: 'a' }], default: 'a' }, targets })).toEqual([
      'strategy.conditions[0].query: is required',
    ]);
  });

  test('provider without custom_host needs an api key or another credential', () => {
    expect(violationsOf({ provider: 'openai', retry: { attempts: 1 } })).toEqual([
      'api_key: required when provider is given without custom_host (or use virtual_key, Authorization or cloud credentials)',
    ]);
    expect(violationsOf({ strategy: { mode: 'single' }, targets: [{ provider: 'openai', weight: 1, request_timeout: 10 }] })).toEqual([
      'targets[0].api_key: required when provider is given without custom_host (or use virtual_key, Authorization or cloud credentials)',
    ]);
    expectValid({ provider: 'bedrock', svcA_access_key_id: 'a', svcA_secret_access_key: 'b', retry: { attempts: 1 } });
    expectValid({ provider: 'openai', virtual_key: 'v' });
  });

  test('passthrough is exclusive with targets, strategy, override_params and guardrail lists', () => {
    expect(
      violationsOf({
        passthrough: true,
        strategy: { mode: 'single' },
        targets: [target()],
        override_params: { model: 'x' },
        input_guardrails: ['g'],
        output_guardrails: ['g'],
      }),
    ).toEqual([
      'targets: not allowed when passthrough is true',
      'strategy: not allowed when passthrough is true',
      'override_params: not allowed when passthrough is true',
      'input_guardrails: not allowed when passthrough is true',
      'output_guardrails: not allowed when passthrough is true',
    ]);
    expectValid({ passthrough: false, virtual_key: 'v', override_params: { model: 'x' } });
    expectValid({ passthrough: true, before_request_hooks: [{ id: 'h' }], default_params: { user: 'u' } });
  });

  test('drop_params paths follow the path grammar', () => {
    expect(violationsOf({ retry: { attempts: 1 }, drop_params: ['ok', 'a..b', '', 'a[x]', '.a', 'a[1', 'a.__proto__.b', 'a["b]'] })).toEqual([
      'drop_params[1]: not a valid path (expected a key at 2)',
      'drop_params[2]: not a valid path (empty path)',
      'drop_params[3]: not a valid path (unexpected "[" at 1)',
      'drop_params[4]: not a valid path (expected a key at 0)',
      'drop_params[5]: not a valid path (unexpected "[" at 1)',
      'drop_params[6]: not a valid path (forbidden key "__proto__")',
      'drop_params[7]: not a valid path (unexpected "[" at 1)',
    ]);
  });

  test('custom_host is an http(s) URL; forward_headers are header names', () => {
    expect(violationsOf({ provider: 'x', custom_host: 'localhost:1234' })).toEqual(['custom_host: must be an http(s) URL']);
    expect(violationsOf({ provider: 'x', custom_host: 'file:///etc/passwd' })).toEqual(['custom_host: must be an http(s) URL']);
    expect(violationsOf({ forward_headers: ['ok', 'bad header', 'x\r\ny'] })).toEqual([
      'forward_headers[1]: not a valid header name',
      'forward_headers[2]: not a valid header name',
    ]);
  });

  test('all violations are collected at once', () => {
    expect(
      violationsOf({
        strategy: { mode: 'conditional' },
        targets: [target({ cb_config: { failure_threshold: 0, cooldown_interval: 30000 } }), { provider: 'p', bogus: true }],
      }),
    ).toEqual([
      'targets[0].cb_config.failure_threshold: must be >= 1',
      'targets[1].bogus: unknown property',
      'strategy.conditions: required when mode is conditional',
      'strategy.default: required when mode is conditional',
      `targets[1]: must contain at least one of these property sets: ${SETS_LIST}`,
      'targets[1].api_key: required when provider is given without custom_host (or use virtual_key, Authorization or cloud credentials)',
    ]);
  });
});

/** The generic property sets in SPEC.md's order, then the loaded providers' credential sets in load order. */
const SETS_LIST =
  'provider+api_key, provider+custom_host, virtual_key, strategy+targets, cache, retry, prompt_id, forward_headers, ' +
  'request_timeout, after_request_hooks, before_request_hooks, input_guardrails, output_guardrails, passthrough, ' +
  'provider+Authorization, provider+svcB_deployment_name+svcB_deployment_type+svcB_region+svcB_api_version, ' +
  'provider+svcB_endpoint_name+svcB_deployment_type, provider+svcB_entra_tenant_id+svcB_entra_client_id+svcB_entra_client_secret, ' +
  'provider+svcA_access_key_id+svcA_secret_access_key, provider+svcC_region+svcC_service_account_json, ' +
  'provider+svcC_region+svcC_project_id';

describe('hardening', () => {
  test('__proto__, constructor and prototype keys anywhere', () => {
    const config = JSON.parse(
      '{"virtual_key":"v","__proto__":{"polluted":true},"override_params":{"constructor":{"prototype":{"x":1}}},' +
        '"input_guardrails":[{"default.contains":{"__proto__":1}}]}',
    );
    expect(violationsOf(config)).toEqual([
      '__proto__: forbidden key',
      'override_params.constructor: forbidden key',
      'input_guardrails[0]["default.contains"].__proto__: forbidden key',
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('targets nested deeper than 32 levels', () => {
    let config: Record<string, unknown> = target();
    for (let i = 0; i < 40; i++) config = { strategy: { mode: 'single' }, targets: [config] };
    expect(violationsOf(config)).toEqual([`${'targets[0].'.repeat(32)}targets[0]: targets nested deeper than 32 levels`]);

    let ok: Record<string, unknown> = target();
    for (let i = 0; i < 32; i++) ok = { strategy: { mode: 'single' }, targets: [ok] };
    expectValid(ok);
  });

  test('very deep free-form objects, huge configs and cycles get a violation, not a stack overflow', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const [depth] = violationsOf({ virtual_key: 'v', override_params: deep });
    expect(depth).toEndWith('nested deeper than 128 levels');
    expect(depth?.startsWith('override_params.a.a.')).toBe(true);

    const huge = { virtual_key: 'v', override_params: { list: Array.from({ length: 60_000 }, (_, i) => i) } };
    expect(violationsOf(huge)).toEqual(['config: larger than 50000 values (or cyclic)']);

    const cyclic: Record<string, unknown> = { virtual_key: 'v' };
    cyclic.override_params = cyclic;
    expect(violationsOf(cyclic)).toHaveLength(1);
  });

  test('values that JSON cannot carry', () => {
    expect(violationsOf({ virtual_key: 'v', override_params: { f: () => 1, n: Number.NaN } })).toEqual([
      'override_params.f: not a JSON value',
      'override_params.n: not a finite number',
    ]);
  });
});

describe('parseParamPath', () => {
  test('segments of each form', () => {
    expect(parseParamPath('tools[*].function["a.b"][3]')).toEqual({ ok: true, segments: ['tools', WILDCARD, 'function', 'a.b', 3] });
    expect(parseParamPath('["x"].y')).toEqual({ ok: true, segments: ['x', 'y'] });
  });
});

// ---- fuzz: nothing may throw ----------------------------------------------------------------------------------

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEY_POOL = [
  'strategy', 'targets', 'mode', 'provider', 'api_key', 'virtual_key', 'cache', 'retry', 'attempts', 'cb_config',
  'conditions', 'default', 'then', 'query', 'name', 'weight', 'passthrough', 'drop_params', 'id', 'checks',
  'parameters', 'on_fail', 'deny', '__proto__', 'constructor', 'x', 'a.b', '', '0',
];

function randomJson(rand: () => number, depth: number): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const roll = rand();
  if (depth <= 0 || roll < 0.35) {
    return pick([null, true, false, 0, -1, 1.5, 30000, 1e308, '', 'single', 'conditional', 'a..b', '@slug', 'http://h', '{']);
  }
  if (roll < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => randomJson(rand, depth - 1));
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 5); i > 0; i--) {
    Object.defineProperty(out, pick(KEY_POOL), { value: randomJson(rand, depth - 1), enumerable: true, configurable: true, writable: true });
  }
  return out;
}

/** Changes one random place of a (cloned) config: replace a value, delete a key, or add one. */
function mutate(value: unknown, rand: () => number): unknown {
  const root = structuredClone(value);
  const containers: (Record<string, unknown> | unknown[])[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node !== null && typeof node === 'object') {
      containers.push(node as Record<string, unknown>);
      stack.push(...Object.values(node));
    }
  }
  const container = containers[Math.floor(rand() * containers.length)] as Record<string, unknown>;
  const keys = Object.keys(container);
  const key = keys.length > 0 && rand() < 0.8 ? (keys[Math.floor(rand() * keys.length)] as string) : KEY_POOL[Math.floor(rand() * KEY_POOL.length)] as string;
  if (rand() < 0.25) delete container[key];
  else container[key] = randomJson(rand, 2);
  return root;
}

test('fuzz: 3000 random values and mutated configs either validate or list violations', () => {
  const rand = mulberry32(20240611);
  const seeds = Object.values(PROPERTY_SET_EXAMPLES);
  let valid = 0;
  for (let i = 0; i < 3000; i++) {
    let value: unknown;
    if (i % 3 === 0) value = randomJson(rand, 5);
    else {
      value = seeds[Math.floor(rand() * seeds.length)];
      for (let m = 1 + Math.floor(rand() * 3); m > 0; m--) value = mutate(value, rand);
    }
    const result = validateConfig(value);
    if (result.ok) {
      valid++;
      expect(result.config).toBe(value as never);
    } else {
      expect(result.violations.length).toBeGreaterThan(0);
      for (const violation of result.violations) expect(violation).toMatch(/^\S+: \S/);
    }
  }
  // Both outcomes occur, so the fuzz exercises both paths.
  expect(valid).toBeGreaterThan(50);
  expect(valid).toBeLessThan(3000);
});
