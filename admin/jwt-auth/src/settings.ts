/**
 * The JWT settings from the environment (docs/jwt.md). JWT authentication is on when JWT_JWKS_URL or JWT_PUBLIC_KEY
 * is set; then an issuer and an audience are required, so that no token of another issuer or another service passes.
 * A bad setting stops the start with a message naming it.
 */
import { GatewayError } from '@gateway/sdk';

/** Asymmetric algorithms only: the data plane verifies with public keys and holds no signing secret. */
export const SUPPORTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;

export interface JwtSettings {
  /** The JWKS URL (fetched through the outbound guard), or undefined with a static key. */
  readonly jwksUrl?: string;
  /** A static public key: PEM (SPKI) or a JWK as JSON. */
  readonly publicKey?: string;
  readonly issuer: string;
  readonly audience: readonly string[];
  readonly algorithms: readonly string[];
  readonly clockToleranceSeconds: number;
  readonly workspaceClaim: string;
  readonly scopesClaim: string;
  readonly userClaim: string;
  /** Least time between two JWKS fetches an unknown key id causes. */
  readonly jwksCooldownMs: number;
  /** How long fetched keys are used before the JWKS is fetched again. */
  readonly jwksMaxAgeMs: number;
  readonly jwksTimeoutMs: number;
  /** How long a verified token is answered from memory (never past its `exp`); 0 verifies every call. */
  readonly tokenCacheMs: number;
}

function invalid(name: string, why: string): GatewayError {
  return new GatewayError({ code: 'invalid_setting', status: 500, message: `${name} ${why}` });
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function milliseconds(env: Readonly<Record<string, string | undefined>>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw invalid(name, `must be a number of milliseconds ≥ 0, got ${JSON.stringify(raw)}`);
  return value;
}

/** The settings, or undefined when JWT authentication is off (neither JWT_JWKS_URL nor JWT_PUBLIC_KEY set). */
export function readJwtSettings(env: Readonly<Record<string, string | undefined>>): JwtSettings | undefined {
  const jwksUrl = env.JWT_JWKS_URL?.trim() || undefined;
  const publicKey = env.JWT_PUBLIC_KEY?.trim() || undefined;
  if (!jwksUrl && !publicKey) return undefined;
  if (jwksUrl && publicKey) throw invalid('JWT_JWKS_URL and JWT_PUBLIC_KEY', 'are both set: set one');
  if (jwksUrl) {
    let url: URL;
    try {
      url = new URL(jwksUrl);
    } catch {
      throw invalid('JWT_JWKS_URL', 'is not a URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('JWT_JWKS_URL', 'must be an http(s) URL');
  }
  const issuer = env.JWT_ISSUER?.trim();
  if (!issuer) throw invalid('JWT_ISSUER', 'is required with JWT authentication (the `iss` every token must carry)');
  const audience = list(env.JWT_AUDIENCE);
  if (audience.length === 0) throw invalid('JWT_AUDIENCE', 'is required with JWT authentication (the `aud` a token must name)');
  const algorithms = list(env.JWT_ALGORITHMS ?? 'RS256,ES256');
  if (algorithms.length === 0) throw invalid('JWT_ALGORITHMS', 'names no algorithm');
  for (const alg of algorithms)
    if (!(SUPPORTED_ALGORITHMS as readonly string[]).includes(alg))
      throw invalid('JWT_ALGORITHMS', `names ${JSON.stringify(alg)}: allowed are ${SUPPORTED_ALGORITHMS.join(', ')} (no HS* or none)`);
  const tolerance = Number(env.JWT_CLOCK_TOLERANCE_SECONDS ?? '30');
  if (!Number.isFinite(tolerance) || tolerance < 0 || tolerance > 300) throw invalid('JWT_CLOCK_TOLERANCE_SECONDS', 'must be between 0 and 300');
  return {
    jwksUrl,
    publicKey,
    issuer,
    audience,
    algorithms,
    clockToleranceSeconds: tolerance,
    workspaceClaim: env.JWT_WORKSPACE_CLAIM?.trim() || 'workspace_id',
    scopesClaim: env.JWT_SCOPES_CLAIM?.trim() || 'scope',
    userClaim: env.JWT_USER_CLAIM?.trim() || 'sub',
    jwksCooldownMs: milliseconds(env, 'JWT_JWKS_COOLDOWN_MS', 30_000),
    jwksMaxAgeMs: milliseconds(env, 'JWT_JWKS_MAX_AGE_MS', 600_000),
    jwksTimeoutMs: milliseconds(env, 'JWT_JWKS_TIMEOUT_MS', 5_000),
    tokenCacheMs: milliseconds(env, 'JWT_TOKEN_CACHE_MS', 60_000),
  };
}
