import { guardHostsWith, compileParameters, failedVerdict, httpUrl, invalidParameters, postJson, textOf, type CheckResult } from '@gateway/guardrail-kit';
import { definePlugin, type GuardrailCheck, type GuardrailCheckContext, type JsonObject } from '@gateway/sdk';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

export const DEFAULT_TIMEOUT_MS = 10_000;
/** SPEC.md: the security guardrail defaults to `deny: true`. */
export const DEFAULT_DENY = true;

export const SecurityParameters = Type.Object(
  {
    /**
     * The service's domain (required): a host name with an optional port, called over https
     * (`guard.eu.acme-security.example` → `https://guard.eu.acme-security.example/v1/scan`), or a whole http(s) base
     * URL for a self-hosted scanner (`http://scanner.internal:8080/api`).
     */
    apiDomain: Type.String({ minLength: 1, maxLength: 2048 }),
    /** Sent as `Authorization: Bearer …`; never logged, never in data or errors. */
    apiKey: Type.Optional(Type.String({ minLength: 1 })),
    /** The scan profile the service applies (its own default when absent). */
    profile: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /**
     * Whether a failed verdict should deny, when the config's guardrail entry does not say (README.md, "Deny by
     * default"). Reported back in `data.deny`; an entry's own `deny` always wins.
     */
    deny: Type.Boolean({ default: DEFAULT_DENY }),
    timeout: Type.Integer({ minimum: 1, maximum: 600_000, default: DEFAULT_TIMEOUT_MS }),
  },
  { additionalProperties: false },
);
export type SecurityParameters = Static<typeof SecurityParameters>;

const HOST = /^(?=.{1,253}(?::\d{1,5})?$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:\d{1,5})?$/i;

/** The base URL an `apiDomain` stands for, or why it is not one. */
export function baseUrlOf(apiDomain: string): URL | string {
  if (apiDomain.includes('://')) return httpUrl('apiDomain', apiDomain);
  if (!HOST.test(apiDomain)) return 'apiDomain: must be a host name (optionally with :port) or an http(s) URL';
  return new URL(`https://${apiDomain}`);
}

const parameters = compileParameters(SecurityParameters, (p) => {
  const base = baseUrlOf(p.apiDomain);
  return typeof base === 'string' ? [base] : [];
});

const ScanAnswer = TypeCompiler.Compile(
  Type.Object({
    blocked: Type.Boolean(),
    detections: Type.Optional(
      Type.Array(
        Type.Object({
          type: Type.String(),
          confidence: Type.Optional(Type.Number()),
          detail: Type.Optional(Type.String()),
        }),
      ),
    ),
  }),
);

async function run(ctx: GuardrailCheckContext, raw: JsonObject): Promise<CheckResult> {
  const parsed = parameters.parse(raw);
  // Even with unusable parameters the default stands: a misconfigured security check denies unless told otherwise.
  const deny = typeof raw.deny === 'boolean' ? raw.deny : DEFAULT_DENY;
  if (!parsed.ok) return invalidParameters(parsed.errors, { deny });
  const p = parsed.value;
  const text = textOf(ctx);
  if (text === '') return { verdict: true, data: { deny: p.deny, skipped: 'no text to scan' } };

  const base = baseUrlOf(p.apiDomain) as URL; // checked by the parameter rules
  const call = await postJson({
    service: 'security service',
    url: new URL(`${base.href.replace(/\/+$/, '')}/v1/scan`),
    headers: p.apiKey ? { authorization: `Bearer ${p.apiKey}` } : {},
    body: {
      direction: ctx.phase === 'input' ? 'prompt' : 'response',
      text,
      ...(p.profile === undefined ? {} : { profile: p.profile }),
    },
    timeoutMs: p.timeout,
    signal: ctx.request.signal,
    secrets: [p.apiKey],
  });
  if (!call.ok) return failedVerdict(call.error, { deny: p.deny });
  if (!ScanAnswer.Check(call.json)) {
    return failedVerdict({ kind: 'unreadable', message: 'security service answer has no boolean "blocked"' }, { deny: p.deny });
  }
  const answer = call.json;
  return {
    verdict: !answer.blocked,
    data: { deny: p.deny, blocked: answer.blocked, detections: answer.detections ?? [] },
  };
}

/** `security.scan`: the request (direction `prompt`) or the answer (direction `response`). */
export const securityCheck: GuardrailCheck = {
  id: 'security.scan',
  validate: parameters.validate,
  destination: ['apiDomain'],
  run,
};

export default definePlugin({
  setup(api) {
    guardHostsWith(api);
    api.guardrail(securityCheck);
  },
});
