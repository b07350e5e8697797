/**
 * The authenticator of gateway calls (the data plane): a JWT-shaped secret goes to the JWT verifier (service
 * `jwtVerifier`, docs/jwt.md), anything else to the API-key verifier. The administration API keeps the API-key
 * verifier alone: a JWT never authorises an administration call.
 */
import { Errors, type KeyVerifier } from '@gateway/sdk';

/** base64url(header).base64url(payload).base64url(signature); a JSON header always starts `{"` = `eyJ`. */
const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Whether a secret is shaped like a compact JWS. Gateway API keys never are (they hold no dots). */
export function looksLikeJwt(secret: string): boolean {
  return secret.length > 16 && secret.charCodeAt(0) === 101 /* e */ && JWT_SHAPE.test(secret);
}

/** Refuses JWTs when no JWT verifier is configured: said plainly rather than as an unknown API key. */
const NO_JWT: KeyVerifier = {
  verify: () =>
    Promise.reject(Errors.unauthorized('The token is a JWT, but this gateway does not accept JWTs (JWT_JWKS_URL or JWT_PUBLIC_KEY is not set)')),
};

/** The data plane's authenticator: `apiKeys` for API keys, `jwt` (or a refusal) for JWT-shaped secrets. */
export function dataPlaneAuthenticator(apiKeys: KeyVerifier | undefined, jwt: KeyVerifier | undefined): KeyVerifier | undefined {
  if (!apiKeys && !jwt) return undefined;
  const tokens = jwt ?? NO_JWT;
  const keys: KeyVerifier = apiKeys ?? { verify: async () => undefined };
  return {
    verify: (secret) => (looksLikeJwt(secret) ? tokens.verify(secret) : keys.verify(secret)),
    peek: (secret) => (looksLikeJwt(secret) ? tokens.peek?.(secret) : keys.peek?.(secret)),
  };
}
