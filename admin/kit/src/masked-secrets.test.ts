import { describe, expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import { formatPath, joinSecrets, MASK, restoreMasked, splitSecrets } from './masked-secrets.ts';

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
    const { masked, secrets } = splitSecrets(config);
    const text = JSON.stringify(masked);
    for (const secret of ['sk-one', 'aws-secret', '"pk"', 'Bearer h', 'pol-key', '{\\"a\\":\\"b\\"}']) expect(text).not.toContain(secret);
    expect(text).toContain('AKIA'); // an access key id is not a secret
    expect(text).toContain('max_tokens');
    expect((masked.targets as JsonObject[])[0]?.api_key).toBe(MASK);
    expect(secrets.map(([path]) => formatPath(path))).toEqual([
      'targets[0].api_key',
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
    const { masked, secrets } = splitSecrets(config);
    expect(restoreMasked(masked, secrets, '').value).toEqual(config);
    const moved: JsonObject = { ...masked, targets: [{ provider: 'openai', api_key: MASK, custom_host: 'http://h' }, { provider: 'x', api_key: MASK }] };
    const { problems } = restoreMasked(moved, secrets.slice(1), 'config');
    expect(problems).toEqual([
      'config.targets[0].api_key: "********" stands for a stored secret, and none is stored at this path',
      'config.targets[1].api_key: "********" stands for a stored secret, and none is stored at this path',
    ]);
    // A new value replaces the stored one; the mask outside a secret position is just text.
    const fresh = restoreMasked({ api_key: 'sk-new', model: MASK }, secrets, '');
    expect(fresh).toEqual({ value: { api_key: 'sk-new', model: MASK }, problems: [] });
  });
});
