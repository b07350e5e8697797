// policy.check (@gateway/guardrail-policy) against a local policy service speaking the API in its README.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DEFAULT_TIMEOUT_MS, policyCheck } from '@gateway/guardrail-policy';
import { chatAnswer, chatBody, checkContext, POLICY_KEY, type Services, startServices } from './support.ts';

let services: Services;
const params = (extra: Record<string, unknown> = {}) => ({ policyId: 'pol_no_competitors', apiKey: POLICY_KEY, baseURL: services.url, ...extra }) as never;

beforeAll(() => {
  services = startServices();
});
afterAll(() => services.stop());

describe('policy.check parameters', () => {
  test('policyId is required; timeout defaults to 10000 ms; baseURL must be http(s); unknown parameters are refused', () => {
    expect(policyCheck.id).toBe('policy.check');
    expect(DEFAULT_TIMEOUT_MS).toBe(10_000);
    expect(policyCheck.validate?.({ policyId: 'p' })).toEqual([]);
    expect(policyCheck.validate?.({})).toEqual(['policyId: Expected required property']);
    expect(policyCheck.validate?.({ policyId: '' })).toHaveLength(1);
    expect(policyCheck.validate?.({ policyId: 'p', timeout: 0 })?.[0]).toStartWith('timeout:');
    expect(policyCheck.validate?.({ policyId: 'p', timeout: 2.5 })?.[0]).toStartWith('timeout:');
    expect(policyCheck.validate?.({ policyId: 'p', baseURL: 'gopher://x' })).toEqual(['baseURL: only http and https URLs are allowed']);
    expect(policyCheck.validate?.({ policyId: 'p', policy: 'typo' })?.[0]).toStartWith('policy:');
  });

  test('a run with invalid parameters is a failed verdict naming them, not a throw', async () => {
    services.received.length = 0;
    const result = await policyCheck.run(checkContext(), { baseURL: services.url });
    expect(result).toEqual({ verdict: false, data: { phase: 'input', error: { kind: 'invalid_parameters', message: 'policyId: Expected required property' } } });
    expect(services.received).toHaveLength(0);
  });
});

describe('policy.check before the request (phase input)', () => {
  test('allow: verdict true, the service reasons and evaluation id in data; what was sent', async () => {
    services.received.length = 0;
    const ctx = checkContext({ body: chatBody('Tell me about our product'), metadata: { team: 'search', user: 'u-1' } });
    const result = await policyCheck.run(ctx, params());
    expect(result).toEqual({
      verdict: true,
      data: { policyId: 'pol_no_competitors', phase: 'input', decision: 'allow', reasons: [], evaluationId: 'ev_input' },
    });
    expect(services.received).toHaveLength(1);
    const sent = services.received[0];
    expect(sent?.path).toBe('/v1/policies/pol_no_competitors/evaluate');
    expect(sent?.headers.authorization).toBe(`Bearer ${POLICY_KEY}`);
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(sent?.body).toEqual({
      phase: 'input',
      text: 'Tell me about our product',
      metadata: { team: 'search', user: 'u-1' },
      request: { trace_id: 'trace-guardrails-1', endpoint: 'chatComplete', model: 'gpt-4o-mini' },
    });
  });

  test('deny: verdict false with the reasons', async () => {
    const result = await policyCheck.run(checkContext({ body: chatBody('Is CompetitorCo better?') }), params());
    expect(result).toEqual({
      verdict: false,
      data: {
        policyId: 'pol_no_competitors',
        phase: 'input',
        decision: 'deny',
        reasons: [{ code: 'competitor.mention', message: 'mentions a competitor by name' }],
        evaluationId: 'ev_input',
      },
    });
  });

  test('a policy on metadata: the request metadata is what is judged', async () => {
    const ok = await policyCheck.run(checkContext({ metadata: { team: 'ads' } }), params({ policyId: 'pol_team_required' }));
    const missing = await policyCheck.run(checkContext(), params({ policyId: 'pol_team_required' }));
    expect(ok.verdict).toBe(true);
    expect(missing).toMatchObject({ verdict: false, data: { reasons: [{ code: 'metadata.team_missing' }] } });
  });

  test('policyId is escaped into the path; a baseURL path prefix is kept', async () => {
    services.received.length = 0;
    await policyCheck.run(checkContext(), params({ policyId: 'team a/b?c', baseURL: `${services.url}/policy-proxy/` }));
    expect(services.received[0]?.path).toBe('/policy-proxy/v1/policies/team%20a%2Fb%3Fc/evaluate');
  });
});

describe('policy.check after the request (phase output)', () => {
  test('judges the answer text and tells the service the phase', async () => {
    services.received.length = 0;
    const denied = await policyCheck.run(checkContext({ phase: 'output', responseBody: chatAnswer('You could try CompetitorCo.') }), params());
    expect(denied).toMatchObject({ verdict: false, data: { phase: 'output', decision: 'deny', evaluationId: 'ev_output' } });
    expect(services.received[0]?.body).toMatchObject({ phase: 'output', text: 'You could try CompetitorCo.' });
    const allowed = await policyCheck.run(checkContext({ phase: 'output', responseBody: chatAnswer('Our product does that.') }), params());
    expect(allowed.verdict).toBe(true);
  });
});

describe('policy.check failures are failed verdicts with the error in data', () => {
  test('non-2xx: an unknown policy (404), a wrong key (401) without the key in the answer', async () => {
    expect(await policyCheck.run(checkContext(), params({ policyId: 'pol_missing' }))).toEqual({
      verdict: false,
      data: {
        policyId: 'pol_missing',
        phase: 'input',
        error: { kind: 'http_status', status: 404, message: `policy service at ${new URL(services.url).host} answered 404: policy pol_missing not found` },
      },
    });
    const wrongKey = await policyCheck.run(checkContext(), params({ apiKey: 'pk-wrong-secret-1234' }));
    expect(wrongKey).toMatchObject({ verdict: false, data: { error: { kind: 'http_status', status: 401 } } });
    expect(JSON.stringify(wrongKey)).not.toContain('pk-wrong-secret-1234');
  });

  test('timeout: no decision within `timeout` ms', async () => {
    services.override = async () => {
      await Bun.sleep(1_500);
      return Response.json({ decision: 'allow' });
    };
    try {
      const started = performance.now();
      const result = await policyCheck.run(checkContext(), params({ timeout: 100 }));
      expect(result).toMatchObject({ verdict: false, data: { policyId: 'pol_no_competitors', error: { kind: 'timeout', message: expect.stringContaining('within 100 ms') } } });
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      services.override = undefined;
    }
  });

  test('unreadable: not JSON, or JSON without a valid decision', async () => {
    try {
      services.override = () => new Response('OK', { status: 200 });
      expect(await policyCheck.run(checkContext(), params())).toMatchObject({ verdict: false, data: { error: { kind: 'unreadable' } } });
      services.override = () => Response.json({ decision: 'maybe' });
      expect(await policyCheck.run(checkContext(), params())).toMatchObject({
        verdict: false,
        data: { error: { kind: 'unreadable', message: 'policy service answer has no valid "decision" (allow or deny)' } },
      });
    } finally {
      services.override = undefined;
    }
  });

  test('unreachable service: a network error', async () => {
    const result = await policyCheck.run(checkContext(), params({ baseURL: 'http://127.0.0.1:9' }));
    expect(result).toMatchObject({ verdict: false, data: { error: { kind: 'network' } } });
  });
});
