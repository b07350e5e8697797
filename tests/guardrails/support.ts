// Local stand-ins for the guardrail services the external checks call, speaking the APIs documented in each
// package's README, plus a GuardrailCheckContext builder. Nothing here leaves 127.0.0.1.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GuardrailCheckContext, JsonObject } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { ROOT } from '../helpers/gateway-process.ts';

export const POLICY_KEY = 'pk-test-policy-7f3a9c';
export const SECURITY_KEY = 'sk-test-security-41bd02';
export const CLASSIFIER_KEY = 'ck-test-classifier-88e1';
export const CONTENT_SAFETY_KEY = 'cs-test-key-5c0d77';

export interface Received {
  method: string;
  path: string;
  search: string;
  headers: Record<string, string>;
  body: unknown;
}

export interface Services {
  url: string;
  received: Received[];
  /** When set, answers every request instead of the documented behaviour (failure modes). */
  override: ((req: Request) => Response | Promise<Response>) | undefined;
  stop(): void;
}

const json = (body: unknown, status = 200) => Response.json(body, { status });
const bearer = (req: Request, key: string) => req.headers.get('authorization') === `Bearer ${key}`;

/** Policy service: POST /v1/policies/{policyId}/evaluate. */
function policy(req: Request, policyId: string, body: { phase: string; text: string; metadata: Record<string, string> }): Response {
  if (!bearer(req, POLICY_KEY)) return json({ error: { code: 'unauthorized', message: 'invalid or missing API key' } }, 401);
  if (policyId === 'pol_no_competitors') {
    const reasons = body.text.includes('CompetitorCo') ? [{ code: 'competitor.mention', message: 'mentions a competitor by name' }] : [];
    return json({ decision: reasons.length ? 'deny' : 'allow', reasons, evaluation_id: `ev_${body.phase}` });
  }
  if (policyId === 'pol_team_required') {
    // A policy on metadata rather than text.
    return body.metadata.team
      ? json({ decision: 'allow', reasons: [] })
      : json({ decision: 'deny', reasons: [{ code: 'metadata.team_missing', message: 'requests must name a team' }] });
  }
  return json({ error: { code: 'not_found', message: `policy ${policyId} not found` } }, 404);
}

/** Security service: POST /v1/scan. */
function security(req: Request, body: { direction: string; text: string }): Response {
  if (!bearer(req, SECURITY_KEY)) return json({ error: { message: 'invalid token' } }, 401);
  const detections = [];
  if (/ignore (all )?previous instructions/i.test(body.text)) detections.push({ type: 'prompt_injection', confidence: 0.98, detail: 'instruction override' });
  if (/AKIA[0-9A-Z]{16}/.test(body.text)) detections.push({ type: 'secret', confidence: 1, detail: 'AWS access key id' });
  return json({ blocked: detections.length > 0, detections });
}

/** Classifier: POST <apiEndpoint> (the tests use /v1/classify). */
function classify(req: Request, body: { model: string; text: string }): Response {
  if (req.headers.get('authorization') && !bearer(req, CLASSIFIER_KEY)) return json({ error: 'bad key' }, 401);
  if (body.model === 'prompt-injection') {
    const hit = /ignore (all )?previous instructions/i.test(body.text);
    return json({ model: body.model, score: hit ? 0.97 : 0.02, label: hit ? 'INJECTION' : 'SAFE' });
  }
  if (body.model === 'toxicity') {
    const score = /idiot/i.test(body.text) ? 0.91 : /stupid/i.test(body.text) ? 0.45 : 0.01;
    return json({ model: body.model, score, label: score >= 0.5 ? 'TOXIC' : 'NON_TOXIC' });
  }
  return json({ error: { message: `unknown model ${body.model}` } }, 400);
}

/** Content safety: POST /contentsafety/text:analyze?api-version=… */
function contentSafety(req: Request, url: URL, body: { text: string; categories: string[]; blocklistNames?: string[] }): Response {
  if (req.headers.get('api-key') !== CONTENT_SAFETY_KEY) return json({ error: { code: 'Unauthorized', message: 'Access denied due to invalid subscription key.' } }, 401);
  if (!url.searchParams.get('api-version')) return json({ error: { code: 'InvalidRequest', message: 'api-version is required' } }, 400);
  const severity: Record<string, number> = { Hate: 0, SelfHarm: 0, Sexual: 0, Violence: 0 };
  if (/\bhate\b/i.test(body.text)) severity.Hate = 2;
  if (/\bkill\b/i.test(body.text)) severity.Violence = 6;
  const blocklistsMatch =
    body.blocklistNames?.includes('codenames') && body.text.includes('Project Falcon')
      ? [{ blocklistName: 'codenames', blocklistItemId: 'item-1', blocklistItemText: 'Project Falcon' }]
      : [];
  return json({ blocklistsMatch, categoriesAnalysis: body.categories.map((category) => ({ category, severity: severity[category] ?? 0 })) });
}

export function startServices(): Services {
  const services: Services = {
    url: '',
    received: [],
    override: undefined,
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 30,
    async fetch(req) {
      const url = new URL(req.url);
      const text = await req.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      services.received.push({ method: req.method, path: url.pathname, search: url.search, headers: Object.fromEntries(req.headers), body });
      if (services.override) return services.override(req);
      if (req.method !== 'POST') return json({ error: { message: 'method not allowed' } }, 405);
      const evaluate = /^(?:\/[^/]+)*\/v1\/policies\/([^/]+)\/evaluate$/.exec(url.pathname);
      if (evaluate) return policy(req, decodeURIComponent(evaluate[1] as string), body as never);
      if (url.pathname.endsWith('/v1/scan')) return security(req, body as never);
      if (url.pathname.endsWith('/v1/classify')) return classify(req, body as never);
      if (url.pathname.endsWith('/contentsafety/text:analyze')) return contentSafety(req, url, body as never);
      return json({ error: { message: 'no such route' } }, 404);
    },
  });
  services.url = server.url.origin;
  return services;
}

export interface ContextOptions {
  phase?: 'input' | 'output';
  body?: JsonObject;
  responseBody?: JsonObject;
  metadata?: Record<string, string>;
  signal?: AbortSignal;
}

/** A check context as the engine would build it, for calling a check directly. */
export function checkContext(options: ContextOptions = {}): GuardrailCheckContext {
  const body = options.body ?? { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] };
  const request = buildGatewayRequest({ traceId: 'trace-guardrails-1', body, rawBody: undefined, metadata: options.metadata, signal: options.signal });
  return {
    request,
    phase: options.phase ?? 'input',
    ...(options.responseBody ? { responseBody: options.responseBody } : {}),
  };
}

/** A chat body with one user message. */
export function chatBody(content: string): JsonObject {
  return { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] };
}

/** An OpenAI-shaped chat answer. */
export function chatAnswer(content: string): JsonObject {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
  };
}

/** Whether the hook engine (plugins/hooks) is there: its package and its entry module. */
export function engineInstalled(): boolean {
  const dir = join(ROOT, 'plugins', 'hooks');
  try {
    const entry = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { gateway?: { entry?: string } }).gateway?.entry;
    return typeof entry === 'string' && existsSync(join(dir, entry));
  } catch {
    return false;
  }
}
