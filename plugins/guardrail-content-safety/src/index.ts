import { guardHostsWith, compileParameters, failedVerdict, invalidParameters, postJson, textOf, urlRule, type CheckResult } from '@gateway/guardrail-kit';
import { definePlugin, type GuardrailCheck, type GuardrailCheckContext, type JsonObject } from '@gateway/sdk';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

export const CATEGORIES = ['Hate', 'SelfHarm', 'Sexual', 'Violence'] as const;
export type Category = (typeof CATEGORIES)[number];
export const DEFAULT_API_VERSION = '2024-09-01';
/** Medium and high severities fail (the service reports 0, 2, 4, 6). */
export const DEFAULT_SEVERITY_THRESHOLD = 4;
export const DEFAULT_TIMEOUT_MS = 10_000;

/** The service's base URL for a resource; `customHost` replaces it. */
export function resourceBaseUrl(resourceName: string): string {
  return `https://${resourceName}.contentsafety.cloud.example`;
}

const CategoryName = Type.Union(CATEGORIES.map((c) => Type.Literal(c)));

export const ContentSafetyParameters = Type.Object(
  {
    /** The cloud resource; the base URL is `https://<resourceName>.contentsafety.cloud.example`. */
    resourceName: Type.Optional(Type.String({ pattern: '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$' })),
    /** Replaces the base URL (http or https; a path prefix is kept), e.g. a private endpoint or a proxy. */
    customHost: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    /** Sent as the `api-key` header; never logged, never in data or errors. */
    apiKey: Type.Optional(Type.String({ minLength: 1 })),
    apiVersion: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}(-preview)?$', default: DEFAULT_API_VERSION }),
    /** Which categories to analyse and judge. */
    categories: Type.Array(CategoryName, { minItems: 1, uniqueItems: true, default: [...CATEGORIES] }),
    /** A category at or above this severity (0 … 7) fails the check. */
    severityThreshold: Type.Integer({ minimum: 0, maximum: 7, default: DEFAULT_SEVERITY_THRESHOLD }),
    /** Blocklists (kept in the service) to match; any match fails the check. */
    blocklistNames: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 10 })),
    timeout: Type.Integer({ minimum: 1, maximum: 600_000, default: DEFAULT_TIMEOUT_MS }),
  },
  { additionalProperties: false },
);
export type ContentSafetyParameters = Static<typeof ContentSafetyParameters>;

const parameters = compileParameters(ContentSafetyParameters, (p) => {
  if (p.resourceName === undefined && p.customHost === undefined) return ['resourceName or customHost: one of them is required'];
  return urlRule('customHost', p.customHost);
});

const Analysis = TypeCompiler.Compile(
  Type.Object({
    categoriesAnalysis: Type.Array(Type.Object({ category: Type.String(), severity: Type.Integer({ minimum: 0 }) })),
    blocklistsMatch: Type.Optional(
      Type.Array(
        Type.Object({
          blocklistName: Type.String(),
          blocklistItemId: Type.Optional(Type.String()),
          blocklistItemText: Type.Optional(Type.String()),
        }),
      ),
    ),
  }),
);

function analyzeUrl(p: ContentSafetyParameters): URL {
  const base = (p.customHost ?? resourceBaseUrl(p.resourceName as string)).replace(/\/+$/, '');
  const url = new URL(`${base}/contentsafety/text:analyze`);
  url.searchParams.set('api-version', p.apiVersion);
  return url;
}

async function run(ctx: GuardrailCheckContext, raw: JsonObject): Promise<CheckResult> {
  const parsed = parameters.parse(raw);
  if (!parsed.ok) return invalidParameters(parsed.errors);
  const p = parsed.value;
  const text = textOf(ctx);
  if (text === '') return { verdict: true, data: { severityThreshold: p.severityThreshold, skipped: 'no text to analyse' } };
  const call = await postJson({
    service: 'content-safety service',
    url: analyzeUrl(p),
    headers: p.apiKey ? { 'api-key': p.apiKey } : {},
    body: {
      text,
      categories: p.categories,
      outputType: 'FourSeverityLevels',
      ...(p.blocklistNames ? { blocklistNames: p.blocklistNames, haltOnBlocklistHit: false } : {}),
    },
    timeoutMs: p.timeout,
    signal: ctx.request.signal,
    secrets: [p.apiKey],
  });
  if (!call.ok) return failedVerdict(call.error, { severityThreshold: p.severityThreshold });
  if (!Analysis.Check(call.json)) {
    return failedVerdict(
      { kind: 'unreadable', message: 'content-safety service answer has no "categoriesAnalysis" list' },
      { severityThreshold: p.severityThreshold },
    );
  }
  const asked = new Set<string>(p.categories);
  const categories = call.json.categoriesAnalysis.filter((c) => asked.has(c.category)).map((c) => ({ category: c.category, severity: c.severity }));
  const flagged = categories.filter((c) => c.severity >= p.severityThreshold).map((c) => c.category);
  const blocklistsMatch = call.json.blocklistsMatch ?? [];
  return {
    verdict: flagged.length === 0 && blocklistsMatch.length === 0,
    data: { severityThreshold: p.severityThreshold, categories, flagged, blocklistsMatch },
  };
}

/** `contentSafety.analyze`: the request (phase `input`) or the answer (phase `output`). */
export const contentSafetyCheck: GuardrailCheck = {
  id: 'contentSafety.analyze',
  validate: parameters.validate,
  destination: ['resourceName', 'customHost'],
  run,
};

export default definePlugin({
  setup(api) {
    guardHostsWith(api);
    api.guardrail(contentSafetyCheck);
  },
});
