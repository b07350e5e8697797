/**
 * Why a token was refused, said so that the caller can fix it (SPEC: "Invalid JWTs return descriptive error
 * messages"): each jose failure becomes a 401 `invalid_token` naming what was wrong. A JWKS that cannot be fetched
 * is no fault of the token: 503 `jwks_unavailable`, retryable.
 */
import { GatewayError } from '@gateway/sdk';
import { errors as jose } from 'jose';

export function invalidToken(message: string): GatewayError {
  return new GatewayError({
    code: 'invalid_token',
    type: 'authentication_error',
    status: 401,
    message: `Invalid JWT: ${message}`,
    headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
  });
}

export function jwksUnavailable(detail: string): GatewayError {
  return new GatewayError({
    code: 'jwks_unavailable',
    type: 'service_unavailable',
    status: 503,
    message: `The JWT cannot be checked: the JWKS could not be fetched (${detail})`,
    retryable: true,
  });
}

export interface TokenContext {
  readonly kid: string | undefined;
  readonly alg: string | undefined;
  readonly issuer: string;
  readonly audience: readonly string[];
  readonly algorithms: readonly string[];
}

/** A jose (or JWKS fetch) failure as the error the caller gets. */
export function tokenError(error: unknown, ctx: TokenContext): GatewayError {
  if (error instanceof GatewayError) return error.status === 401 ? error : jwksUnavailable(error.message);
  if (error instanceof jose.JWTExpired) {
    if (error.claim === 'exp') {
      const exp = error.payload.exp;
      return invalidToken(typeof exp === 'number' ? `the token expired at ${new Date(exp * 1000).toISOString()}` : 'the token has expired');
    }
    return invalidToken(`the "${error.claim}" claim is too old`);
  }
  if (error instanceof jose.JWTClaimValidationFailed) {
    const { claim, reason, payload } = error;
    if (reason === 'missing') return invalidToken(`the token has no "${claim}" claim`);
    switch (claim) {
      case 'aud':
        return invalidToken(`wrong audience ${JSON.stringify(payload.aud)}: expected ${ctx.audience.map((a) => JSON.stringify(a)).join(' or ')}`);
      case 'iss':
        return invalidToken(`wrong issuer ${JSON.stringify(payload.iss)}: expected ${JSON.stringify(ctx.issuer)}`);
      case 'nbf':
        return invalidToken(
          typeof payload.nbf === 'number' ? `the token is not valid before ${new Date(payload.nbf * 1000).toISOString()}` : 'the token is not valid yet',
        );
      case 'iat':
        return invalidToken('the token is issued in the future');
      default:
        return invalidToken(`the "${claim}" claim is invalid (${reason})`);
    }
  }
  if (error instanceof jose.JOSEAlgNotAllowed)
    return invalidToken(`algorithm ${JSON.stringify(ctx.alg)} is not allowed: allowed are ${ctx.algorithms.join(', ')}`);
  if (error instanceof jose.JWKSNoMatchingKey)
    return invalidToken(ctx.kid === undefined ? 'no key of the JWKS matches the token (it names no key id)' : `unknown key id ${JSON.stringify(ctx.kid)}`);
  if (error instanceof jose.JWSSignatureVerificationFailed) return invalidToken('bad signature');
  if (error instanceof jose.JWKSTimeout) return jwksUnavailable('timed out');
  if (error instanceof jose.JWKSInvalid) return jwksUnavailable('it is not a JSON Web Key Set');
  if (error instanceof jose.JOSENotSupported) return invalidToken(`unsupported token: ${error.message}`);
  if (error instanceof jose.JWSInvalid || error instanceof jose.JWTInvalid) return invalidToken(`malformed token: ${error.message}`);
  if (error instanceof jose.JOSEError) {
    // jose's fetch of the JWKS: a status other than 200 is a JOSEError without a subclass.
    if (/JSON Web Key Set/i.test(error.message)) return jwksUnavailable(error.message);
    return invalidToken(error.message);
  }
  // A network failure fetching the JWKS (fetch threw), or an abort.
  return jwksUnavailable(error instanceof Error ? error.message : String(error));
}
