// contentSafety.analyze (@gateway/guardrail-content-safety) against a local content-safety service reached through
// customHost, which replaces the cloud base URL.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { contentSafetyCheck, DEFAULT_SEVERITY_THRESHOLD, resourceBaseUrl } from '@gateway/guardrail-content-safety';
import { chatAnswer, chatBody, checkContext, CONTENT_SAFETY_KEY, type Services, startServices } from './support.ts';

let services: Services;
const params = (extra: Record<string, unknown> = {}) => ({ customHost: services.url, apiKey: CONTENT_SAFETY_KEY, ...extra }) as never;
const ALL = [
  { category: 'Hate', severity: 0 },
  { category: 'SelfHarm', severity: 0 },
  { category: 'Sexual', severity: 0 },
  { category: 'Violence', severity: 0 },
];

beforeAll(() => {
  services = startServices();
});
afterAll(() => services.stop());

describe('contentSafety.analyze parameters', () => {
  test('resourceName or customHost; customHost must be http(s); categories and severityThreshold are checked', () => {
    expect(contentSafetyCheck.id).toBe('contentSafety.analyze');
    expect(DEFAULT_SEVERITY_THRESHOLD).toBe(4);
    expect(resourceBaseUrl('acme-cs')).toBe('https://acme-cs.contentsafety.cloud.example');
    expect(contentSafetyCheck.validate?.({})).toEqual(['resourceName or customHost: one of them is required']);
    expect(contentSafetyCheck.validate?.({ resourceName: 'acme-cs' })).toEqual([]);
    expect(contentSafetyCheck.validate?.({ customHost: 'https://cs.private.example/proxy' })).toEqual([]);
    expect(contentSafetyCheck.validate?.({ customHost: 'ws://cs.example' })).toEqual(['customHost: only http and https URLs are allowed']);
    expect(contentSafetyCheck.validate?.({ resourceName: 'Bad_Name!' })?.[0]).toStartWith('resourceName:');
    expect(contentSafetyCheck.validate?.({ resourceName: 'a1', categories: ['Hate', 'Spam'] })?.[0]).toStartWith('categories/1:');
    expect(contentSafetyCheck.validate?.({ resourceName: 'a1', categories: [] })?.[0]).toStartWith('categories:');
    expect(contentSafetyCheck.validate?.({ resourceName: 'a1', severityThreshold: 8 })?.[0]).toStartWith('severityThreshold:');
  });
});

describe('contentSafety.analyze', () => {
  test('clean text passes; the request goes to customHost with api-version and the api-key header', async () => {
    services.received.length = 0;
    const result = await contentSafetyCheck.run(checkContext({ body: chatBody('Good morning') }), params());
    expect(result).toEqual({ verdict: true, data: { severityThreshold: 4, categories: ALL, flagged: [], blocklistsMatch: [] } });
    const sent = services.received[0];
    expect(sent?.path).toBe('/contentsafety/text:analyze');
    expect(sent?.search).toBe('?api-version=2024-09-01');
    expect(sent?.headers['api-key']).toBe(CONTENT_SAFETY_KEY);
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.body).toEqual({ text: 'Good morning', categories: ['Hate', 'SelfHarm', 'Sexual', 'Violence'], outputType: 'FourSeverityLevels' });
  });

  test('a category at or above severityThreshold fails; below passes', async () => {
    const violent = await contentSafetyCheck.run(checkContext({ body: chatBody('I will kill the process') }), params());
    expect(violent).toMatchObject({ verdict: false, data: { flagged: ['Violence'] } });
    const lowHate = checkContext({ phase: 'output', responseBody: chatAnswer('I hate Mondays') });
    expect(await contentSafetyCheck.run(lowHate, params())).toMatchObject({ verdict: true, data: { flagged: [] } }); // 2 < 4
    expect(await contentSafetyCheck.run(lowHate, params({ severityThreshold: 2 }))).toMatchObject({ verdict: false, data: { flagged: ['Hate'] } });
  });

  test('only the chosen categories are asked for and judged; a blocklist match fails; a customHost path prefix is kept', async () => {
    services.received.length = 0;
    const result = await contentSafetyCheck.run(
      checkContext({ body: chatBody('kill switch for Project Falcon') }),
      params({ customHost: `${services.url}/cs/`, categories: ['Hate'], blocklistNames: ['codenames'], apiVersion: '2024-02-15-preview' }),
    );
    expect(result).toEqual({
      verdict: false,
      data: {
        severityThreshold: 4,
        categories: [{ category: 'Hate', severity: 0 }],
        flagged: [],
        blocklistsMatch: [{ blocklistName: 'codenames', blocklistItemId: 'item-1', blocklistItemText: 'Project Falcon' }],
      },
    });
    expect(services.received[0]?.path).toBe('/cs/contentsafety/text:analyze');
    expect(services.received[0]?.search).toBe('?api-version=2024-02-15-preview');
    expect(services.received[0]?.body).toMatchObject({ categories: ['Hate'], blocklistNames: ['codenames'], haltOnBlocklistHit: false });
  });

  test('failures: wrong key (401), timeout, unreadable, each a failed verdict without the key', async () => {
    const wrong = await contentSafetyCheck.run(checkContext(), params({ apiKey: 'cs-wrong-key-000' }));
    expect(wrong).toEqual({
      verdict: false,
      data: {
        severityThreshold: 4,
        error: {
          kind: 'http_status',
          status: 401,
          message: `content-safety service at ${new URL(services.url).host} answered 401: Access denied due to invalid subscription key.`,
        },
      },
    });
    expect(JSON.stringify(wrong)).not.toContain('cs-wrong-key-000');
    try {
      services.override = async () => {
        await Bun.sleep(1_500);
        return Response.json({ categoriesAnalysis: [] });
      };
      expect(await contentSafetyCheck.run(checkContext(), params({ timeout: 80 }))).toMatchObject({ verdict: false, data: { error: { kind: 'timeout' } } });
      services.override = () => Response.json({ result: 'fine' });
      expect(await contentSafetyCheck.run(checkContext(), params())).toMatchObject({ verdict: false, data: { error: { kind: 'unreadable' } } });
    } finally {
      services.override = undefined;
    }
  });
});
