/**
 * `default.log` {logURL, headers?, timeout?=3000}: POSTs the check context (the same JSON as `default.webhook`, see
 * http.ts `hookPayload`) to `logURL` and always passes. Whether the collector took it is in `data.logged` (with
 * `data.status` or `data.error`); a failure never fails the verdict. Only http/https URLs are called, redirects are
 * not followed, and the host guard applies when one is provided.
 */
import { Type } from '@sinclair/typebox';
import { type DefinedCheck, defineCheck } from '../check.ts';
import { HeadersParam, type HttpDeps, checkError, guardedFetch, headersRule, hookPayload, httpUrlRule, parseHeadersParam } from '../http.ts';

export function createLog(deps: HttpDeps): DefinedCheck {
  return defineCheck({
    name: 'log',
    schema: Type.Object(
      {
        logURL: Type.String({ minLength: 1 }),
        headers: Type.Optional(HeadersParam),
        timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 60_000 })),
      },
      { additionalProperties: false },
    ),
    rules: (p) => [...httpUrlRule(p.logURL, 'logURL'), ...headersRule(p.headers)],
    destination: ['logURL'],
    async run(ctx, p) {
      const host = new URL(p.logURL).host;
      try {
        const answer = await guardedFetch(
          p.logURL,
          {
            method: 'POST',
            headers: { ...parseHeadersParam(p.headers), 'content-type': 'application/json' },
            body: JSON.stringify(hookPayload(ctx)),
            timeoutMs: p.timeout ?? 3000,
            signal: ctx.request.signal,
            maxBytes: 0,
            readBody: false,
            what: `log collector ${host}`,
          },
          deps,
        );
        const logged = answer.status >= 200 && answer.status < 300;
        return {
          verdict: true,
          data: { logged, status: answer.status, explanation: `Log collector ${host} answered ${answer.status}.` },
        };
      } catch (error) {
        return { verdict: true, data: { logged: false, error: checkError(error), explanation: `Could not log to ${host}.` } };
      }
    },
  });
}
