/**
 * The default guardrail checks, addressed `default.<check>` (README.md lists each with its parameters).
 *
 * Every check follows the contract in `@gateway/sdk` (GuardrailCheck): `validate(parameters)` returns violations,
 * `run(ctx, parameters)` returns `{verdict, data?, transformed?}` and never changes its inputs (a transformer returns
 * a new body). Policy (deny, async, feedback) is the hook entry's business. What text a check judges is described in
 * text.ts; outbound calls (webhook, log, jwt, inlineImageUrls) follow http.ts.
 *
 * Setup: in the gateway, the checks that call out fetch through the core's outbound guard (service `hostGuard`, sdk
 * `OutboundGuard`): resolved once, every address checked, connected to the checked address. Without one (a bare
 * harness) they still refuse anything but http/https.
 */
import { definePlugin, type OutboundGuard, type PluginApi, Services } from '@gateway/sdk';
import { type DefinedCheck, aliasCheck } from './check.ts';
import { addPrefix } from './checks/addPrefix.ts';
import { allLowercase } from './checks/allLowercase.ts';
import { allowedRequestTypes } from './checks/allowedRequestTypes.ts';
import { allUppercase } from './checks/allUppercase.ts';
import { characterCount } from './checks/characterCount.ts';
import { contains } from './checks/contains.ts';
import { containsCode } from './checks/containsCode.ts';
import { endsWith } from './checks/endsWith.ts';
import { createInlineImageUrls } from './checks/inlineImageUrls.ts';
import { jsonKeys } from './checks/jsonKeys.ts';
import { jsonSchema } from './checks/jsonSchema.ts';
import { createJwt } from './checks/jwt.ts';
import { createLog } from './checks/log.ts';
import { modelRules } from './checks/modelRules.ts';
import { modelWhitelist } from './checks/modelWhitelist.ts';
import { notNull } from './checks/notNull.ts';
import { piiRedact } from './checks/piiRedact.ts';
import { regexMatch } from './checks/regexMatch.ts';
import { regexReplace } from './checks/regexReplace.ts';
import { requiredMetadataKeyPairs } from './checks/requiredMetadataKeyPairs.ts';
import { requiredMetadataKeys } from './checks/requiredMetadataKeys.ts';
import { sentenceCount } from './checks/sentenceCount.ts';
import { validUrls } from './checks/validUrls.ts';
import { createWebhook } from './checks/webhook.ts';
import { wordCount } from './checks/wordCount.ts';
import type { HttpDeps, UrlGuard } from './http.ts';

export { type CheckError, type CheckResult, type DefinedCheck, defineCheck, failedVerdict } from './check.ts';
export { type HttpDeps, type UrlGuard, hookPayload } from './http.ts';
export { judgedText, mapTexts, requestText, responseText } from './text.ts';
export { findPii, luhnValid, PII_ENTITIES, redact } from './pii.ts';

export interface DefaultChecksOptions {
  /** The fetch used for outbound calls (tests pass their own). Default: the global fetch. */
  fetch?: HttpDeps['fetch'];
  /** Called with every outbound URL (and redirect hop) before connecting; throws to refuse it. */
  guardUrl?: UrlGuard;
}

/** Every default check (Portkey's lower-case `alluppercase` / `alllowercase` ids included as aliases). */
export function createDefaultChecks(options: DefaultChecksOptions = {}): DefinedCheck[] {
  const deps: HttpDeps = { fetch: options.fetch ?? ((input, init) => fetch(input, init)), guardUrl: options.guardUrl };
  return [
    regexMatch,
    sentenceCount,
    wordCount,
    characterCount,
    jsonSchema,
    jsonKeys,
    contains,
    validUrls,
    containsCode,
    allUppercase,
    aliasCheck(allUppercase, 'alluppercase'),
    allLowercase,
    aliasCheck(allLowercase, 'alllowercase'),
    endsWith,
    modelWhitelist,
    modelRules,
    allowedRequestTypes,
    notNull,
    createJwt(deps),
    requiredMetadataKeys,
    requiredMetadataKeyPairs,
    createWebhook(deps),
    createLog(deps),
    addPrefix,
    regexReplace,
    piiRedact,
    createInlineImageUrls(deps),
  ];
}

/** The core's outbound guard, when the gateway provides one. */
function outboundGuard(api: PluginApi): OutboundGuard | undefined {
  const service = api.optional(Services.hostGuard);
  return typeof service?.fetch === 'function' ? service : undefined;
}

export default definePlugin({
  setup(api) {
    const guard = outboundGuard(api);
    if (!guard)
      api.logger.debug('no hostGuard service: outbound guardrail calls are limited to http/https but not checked for private addresses');
    for (const check of createDefaultChecks(guard ? { fetch: (url, init) => guard.fetch(url, init) } : {})) api.guardrail(check);
  },
});
