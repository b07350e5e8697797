import { describe, expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import { formatPath, joinSecrets, MASK, restoreMasked, splitSecrets } from './masked-secrets.ts';
import { workspaceFields } from './testing.ts';

const fields = workspaceFields().documents;

describe('secrets in stored documents', () => {
  const config: JsonObject = {
    strategy: { mode: 'fallback' },
    targets: [
      { provider: 'openai', api_key: 'sk-one', override_params: { max_tokens: 5 } },
      { provider: 'bedrock', svcA_access_key_id: 'AKIA', svcA_secret_access_key: 'aws-secret', svcC_service_account_json: { private_key: 'pk' } },
    ],
    input_guardrails: [{ 'default.webhook': { webhookURL: 'https://hooks.example/x', headers: { authorization: 'Bearer h', 'x-plain': 'p' } } }],
    before_request_hooks: [{ id: 'h', checks: [{ id: 'policy.check', parameters: { apiKey: 'pol-key', headers: '{"a":"b"}' } }] }],
  };

  test('split masks every credential, keeps everything else, and join puts them back', () => {
    const { masked, secrets } = splitSecrets(config, fields);
    const text = JSON.stringify(masked);
    // What the providers declare secret is sealed too (Bedrock declares its access key id).
    for (const secret of ['sk-one', 'AKIA', 'aws-secret', '"pk"', 'Bearer h', 'pol-key', '{\\"a\\":\\"b\\"}']) expect(text).not.toContain(secret);
    expect(text).toContain('https://hooks.example/x'); // a destination is not a secret
    expect(text).toContain('max_tokens');
    expect((masked.targets as JsonObject[])[0]?.api_key).toBe(MASK);
    expect(secrets.map(([path]) => formatPath(path))).toEqual([
      'targets[0].api_key',
      'targets[1].svcA_access_key_id',
      'targets[1].svcA_secret_access_key',
      'targets[1].svcC_service_account_json',
      'input_guardrails[0]["default.webhook"].headers.authorization',
      'input_guardrails[0]["default.webhook"].headers.x-plain',
      'before_request_hooks[0].checks[0].parameters.apiKey',
      'before_request_hooks[0].checks[0].parameters.headers',
    ]);
    expect(joinSecrets(masked, secrets)).toEqual(config);
  });

  test('restore: the mask stands for the secret stored at the same path; elsewhere it is a problem', () => {
    const { masked, secrets } = splitSecrets(config, fields);
    expect(restoreMasked(masked, { masked, secrets }, '', fields).value).toEqual(config);
    const moved: JsonObject = { ...masked, targets: [{ provider: 'openai', api_key: MASK }, { provider: 'bedrock', api_key: MASK }] };
    const { problems } = restoreMasked(moved, { masked, secrets: secrets.slice(1) }, 'config', fields);
    expect(problems).toEqual([
      'config.targets[0].api_key: "********" stands for a stored secret, and none is stored at this path',
      'config.targets[1].api_key: "********" stands for a stored secret, and none is stored at this path',
    ]);
    // A new value replaces the stored one; the mask outside a secret position is just text.
    const fresh = restoreMasked({ api_key: 'sk-new', model: MASK }, { masked, secrets }, '', fields);
    expect(fresh).toEqual({ value: { api_key: 'sk-new', model: MASK }, problems: [] });
  });

  test('restore: a mask is not put back where a field that decides where its secret goes changed', () => {
    const { masked, secrets } = splitSecrets(config, fields);
    const previous = { masked, secrets };
    const edit = (change: (doc: JsonObject) => void) => {
      const doc = structuredClone(masked);
      change(doc);
      return restoreMasked(doc, previous, 'config', fields);
    };
    const targets = (doc: JsonObject) => doc.targets as JsonObject[];
    const guard = (doc: JsonObject) => (doc.input_guardrails as JsonObject[])[0]?.['default.webhook'] as JsonObject;
    const hook = (doc: JsonObject) => ((doc.before_request_hooks as JsonObject[])[0]?.checks as JsonObject[])[0] as JsonObject;

    // A target's own host, an inherited host, its provider, a region; a webhook URL; the check a hook's parameters go to.
    const cases: [(doc: JsonObject) => void, string[]][] = [
      [(d) => void (targets(d)[0]!.custom_host = 'http://127.0.0.1:9/v1'), ['config.targets[0].api_key']],
      [(d) => void (d.custom_host = 'http://127.0.0.1:9/v1'), ['config.targets[0].api_key', 'config.targets[1].svcA_access_key_id', 'config.targets[1].svcA_secret_access_key', 'config.targets[1].svcC_service_account_json']],
      [(d) => void (targets(d)[0]!.provider = 'openai-compatible'), ['config.targets[0].api_key']],
      [(d) => void (targets(d)[1]!.svcA_region = 'eu-west-1'), ['config.targets[1].svcA_access_key_id', 'config.targets[1].svcA_secret_access_key', 'config.targets[1].svcC_service_account_json']],
      [(d) => void (guard(d).webhookURL = 'http://127.0.0.1:9/hook'), ['config.input_guardrails[0]["default.webhook"].headers.authorization', 'config.input_guardrails[0]["default.webhook"].headers.x-plain']],
      [(d) => void (hook(d).id = 'security.scan'), ['config.before_request_hooks[0].checks[0].parameters.apiKey', 'config.before_request_hooks[0].checks[0].parameters.headers']],
      [(d) => void (hook(d).parameters = { ...(hook(d).parameters as JsonObject), baseURL: 'http://127.0.0.1:9' }), ['config.before_request_hooks[0].checks[0].parameters.apiKey', 'config.before_request_hooks[0].checks[0].parameters.headers']],
    ];
    for (const [change, refused] of cases) {
      const { problems } = edit(change);
      expect(problems.map((p) => p.slice(0, p.indexOf(': ')))).toEqual(refused);
    }
    // Anything else (a parameter, a new target without secrets, the root's retry) keeps every secret.
    const kept = edit((d) => {
      targets(d)[0]!.override_params = { max_tokens: 50 };
      targets(d).push({ provider: 'openai', api_key: 'sk-two' });
      d.retry = { attempts: 2 };
    });
    expect(kept.problems).toEqual([]);
    expect((kept.value.targets as JsonObject[])[0]?.api_key).toBe('sk-one');
  });
});
