/**
 * `default.webhook` {webhookURL, headers?, timeout?=3000}: POSTs the check context to `webhookURL` and takes the
 * verdict from the answer.
 *
 * Sent (JSON): `{eventType: "beforeRequestHook" | "afterRequestHook", requestType, request: {json, text,
 * isStreamingRequest, path}, response: {json, text}, provider, metadata, traceId}` (http.ts `hookPayload`; request
 * headers and the routing config are never sent). `headers` (an object of strings, or that object as a JSON string)
 * are added to the call.
 *
 * Expected answer: 2xx with a JSON object `{verdict: boolean, transformedData?: {request?: {json}, response?: {json}},
 * data?: any}`. `transformedData.request.json` (input phase) or `transformedData.response.json` (output phase), when
 * it is an object, becomes the transformed body; `data` is passed on as `data.webhookData`.
 *
 * A timeout (`timeout` ms, default 3000, at most 60000; the hook engine uses the same parameter as the check's time
 * limit), a network error, a non-2xx answer (redirects are not followed), an answer over 32 MiB, or one without a
 * boolean `verdict` is a failed verdict with `data.error = {kind, message, status?}` (kinds `timeout`, `aborted`,
 * `network`, `http_status`, `unreadable`, `forbidden`); nothing is thrown. Only http/https URLs without credentials
 * are called, through the host guard when one is provided (http.ts). Messages name the host, never the URL's path.
 */
import type { GuardrailCheckContext, JsonObject } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { type CheckResult, type DefinedCheck, defineCheck, failedVerdict } from '../check.ts';
import {
  HeadersParam,
  type HttpDeps,
  OutboundError,
  checkError,
  guardedFetch,
  headersRule,
  hookPayload,
  httpUrlRule,
  parseHeadersParam,
} from '../http.ts';

export const WEBHOOK_MAX_ANSWER_BYTES = 32 * 1024 * 1024;

interface WebhookParameters {
  webhookURL: string;
  headers?: Record<string, string> | string;
  timeout?: number;
}

async function callWebhook(ctx: GuardrailCheckContext, p: WebhookParameters, host: string, deps: HttpDeps): Promise<CheckResult> {
  const answer = await guardedFetch(
    p.webhookURL,
    {
      method: 'POST',
      headers: { ...parseHeadersParam(p.headers), 'content-type': 'application/json' },
      body: JSON.stringify(hookPayload(ctx)),
      timeoutMs: p.timeout ?? 3000,
      signal: ctx.request.signal,
      maxBytes: WEBHOOK_MAX_ANSWER_BYTES,
      what: `webhook ${host}`,
    },
    deps,
  );
  // The status only: the body of an error answer is not echoed back to the caller (docs/security.md, Outbound URLs).
  if (answer.status < 200 || answer.status >= 300) throw new OutboundError(`webhook ${host} answered ${answer.status}`, 'http_status', answer.status);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(answer.body));
  } catch {
    throw new OutboundError(`webhook ${host} answered with something other than JSON`, 'unreadable');
  }
  if (!isObject(parsed) || typeof parsed.verdict !== 'boolean')
    throw new OutboundError(`webhook ${host} answered without a boolean "verdict"`, 'unreadable');
  const side = ctx.phase === 'input' ? 'request' : 'response';
  const td = parsed.transformedData;
  const candidate = isObject(td) && isObject(td[side]) ? (td[side] as Record<string, unknown>).json : undefined;
  const transformed = isObject(candidate) ? (candidate as JsonObject) : undefined;
  return {
    verdict: parsed.verdict,
    ...(transformed ? { transformed } : {}),
    data: {
      webhookHost: host,
      status: answer.status,
      transformed: transformed !== undefined,
      ...(parsed.data !== undefined ? { webhookData: parsed.data } : {}),
      explanation: `Webhook ${host} gave verdict ${parsed.verdict}.`,
    },
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function createWebhook(deps: HttpDeps): DefinedCheck {
  return defineCheck({
    name: 'webhook',
    schema: Type.Object(
      {
        webhookURL: Type.String({ minLength: 1 }),
        headers: Type.Optional(HeadersParam),
        timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 60_000 })),
      },
      { additionalProperties: false },
    ),
    rules: (p) => [...httpUrlRule(p.webhookURL, 'webhookURL'), ...headersRule(p.headers)],
    destination: ['webhookURL'],
    async run(ctx, p) {
      const host = new URL(p.webhookURL).host;
      try {
        return await callWebhook(ctx, p, host, deps);
      } catch (error) {
        const e = checkError(error);
        return failedVerdict(e, { webhookHost: host, explanation: `Webhook error: ${e.message}` });
      }
    },
  });
}
