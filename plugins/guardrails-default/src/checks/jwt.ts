/**
 * `default.jwt` {jwksUri, headerKey?="Authorization", algorithms?, audience?, issuer?, subject?, requiredClaims?,
 * cacheMaxAge?=86400, clockTolerance?=5, maxTokenAge?}: passes when the request header `headerKey` holds a JWT
 * (a `Bearer ` prefix is removed) whose signature verifies against the JSON Web Key Set at `jwksUri` and whose claims
 * pass the given rules.
 *
 * - Keys are fetched with jose's `createRemoteJWKSet`, one key set per (jwksUri, cacheMaxAge) shared by every request,
 *   kept `cacheMaxAge` seconds; a token whose `kid` is unknown triggers one refetch (at most every 30 s).
 * - `algorithms`: allowed `alg` values (asymmetric only); by default whatever the key allows.
 * - `audience`, `issuer`: a string or a list, the token must match one; `subject`: exact `sub`;
 *   `requiredClaims`: claim names that must be present.
 * - `clockTolerance` (seconds) applies to exp/nbf/iat; `maxTokenAge` ("1h", "1d" or seconds) limits the age from
 *   `iat` (the token must then have one).
 * A missing header or a token that does not verify fails the verdict, with jose's reason in `data.explanation` and
 * its code in `data.code`. A key set that cannot be fetched (network, timeout, non-200, not a key set, a refused host)
 * fails it too, with `data.error = {kind, message}` beside the code. The key set URL must be http/https without
 * credentials and goes through the host guard when one is provided (http.ts); redirects are not followed.
 */
import { Type } from '@sinclair/typebox';
import { type JWTVerifyOptions, createRemoteJWKSet, customFetch, errors, jwtVerify } from 'jose';
import { type DefinedCheck, defineCheck, failedVerdict } from '../check.ts';
import { type HttpDeps, OutboundError, checkError, httpUrlRule, isHttpUrl } from '../http.ts';

export const JWT_ALGORITHMS = [
  'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519',
] as const;

/** Token problems: the verdict fails. Anything else (key set retrieval) is thrown. */
const TOKEN_ERRORS = new Set([
  'ERR_JWT_EXPIRED',
  'ERR_JWT_CLAIM_VALIDATION_FAILED',
  'ERR_JWT_INVALID',
  'ERR_JWS_INVALID',
  'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
  'ERR_JWKS_NO_MATCHING_KEY',
  'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
  'ERR_JOSE_ALG_NOT_ALLOWED',
  'ERR_JOSE_NOT_SUPPORTED',
]);

const OneOrMany = Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })]);

export function createJwt(deps: HttpDeps): DefinedCheck {
  const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  const guardedJwksFetch = async (url: string, options: { headers: Headers; method: 'GET'; redirect: 'manual'; signal: AbortSignal }) => {
    if (!isHttpUrl(url)) throw new OutboundError('JWKS URL must be http or https', 'forbidden');
    if (deps.guardUrl) {
      try {
        await deps.guardUrl(url);
      } catch (error) {
        throw new OutboundError(`refusing to fetch ${new URL(url).host}: ${(error as Error).message}`, 'forbidden');
      }
    }
    return deps.fetch(url, options);
  };

  const keySet = (jwksUri: string, cacheMaxAgeS: number) => {
    const key = `${cacheMaxAgeS}\u0000${jwksUri}`;
    let set = keySets.get(key);
    if (!set) {
      set = createRemoteJWKSet(new URL(jwksUri), {
        cacheMaxAge: cacheMaxAgeS * 1000,
        [customFetch]: guardedJwksFetch,
      });
      if (keySets.size >= 100) keySets.delete(keySets.keys().next().value as string);
      keySets.set(key, set);
    }
    return set;
  };

  return defineCheck({
    name: 'jwt',
    schema: Type.Object(
      {
        jwksUri: Type.String({ minLength: 1 }),
        headerKey: Type.Optional(Type.String({ minLength: 1 })),
        algorithms: Type.Optional(Type.Array(Type.Union(JWT_ALGORITHMS.map((a) => Type.Literal(a))), { minItems: 1 })),
        audience: Type.Optional(OneOrMany),
        issuer: Type.Optional(OneOrMany),
        subject: Type.Optional(Type.String({ minLength: 1 })),
        requiredClaims: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
        cacheMaxAge: Type.Optional(Type.Integer({ minimum: 0 })),
        clockTolerance: Type.Optional(Type.Integer({ minimum: 0 })),
        maxTokenAge: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Integer({ minimum: 1 })])),
      },
      { additionalProperties: false },
    ),
    rules: (p) => httpUrlRule(p.jwksUri, 'jwksUri'),
    async run(ctx, p) {
      const headerKey = p.headerKey ?? 'Authorization';
      const raw = ctx.request.headers.get(headerKey);
      if (!raw || raw.trim() === '')
        return { verdict: false, data: { headerKey, explanation: `Missing ${headerKey} header.`, code: 'missing_header' } };
      const token = raw.replace(/^\s*Bearer\s+/i, '').trim();
      const options: JWTVerifyOptions = {
        algorithms: p.algorithms ? [...p.algorithms] : undefined,
        audience: p.audience,
        issuer: p.issuer,
        subject: p.subject,
        requiredClaims: p.requiredClaims,
        clockTolerance: p.clockTolerance ?? 5,
        maxTokenAge: p.maxTokenAge,
      };
      try {
        const { payload, protectedHeader } = await jwtVerify(token, keySet(p.jwksUri, p.cacheMaxAge ?? 86_400), options);
        return {
          verdict: true,
          data: {
            headerKey,
            explanation: 'The JWT is valid.',
            alg: protectedHeader.alg,
            ...(protectedHeader.kid ? { kid: protectedHeader.kid } : {}),
            ...(payload.sub ? { subject: payload.sub } : {}),
            ...(payload.iss ? { issuer: payload.iss } : {}),
          },
        };
      } catch (error) {
        const code = error instanceof errors.JOSEError ? error.code : undefined;
        if (code && TOKEN_ERRORS.has(code))
          return { verdict: false, data: { headerKey, code, explanation: `JWT rejected: ${(error as Error).message}` } };
        const host = new URL(p.jwksUri).host;
        const kind = code === 'ERR_JWKS_TIMEOUT' ? 'timeout' : code === 'ERR_JWKS_INVALID' ? 'unreadable' : checkError(error).kind;
        const message = `could not get the key set from ${host}: ${(error as Error).message}`;
        return failedVerdict({ kind, message }, { headerKey, code: code ?? 'jwks_unavailable', explanation: `JWT check ${message}` });
      }
    },
  });
}
