/**
 * Verifies a gateway call's JWT locally (service `jwtVerifier`, docs/jwt.md): signature against the JWKS (cached;
 * an unknown key id causes at most one refetch per cooldown, so a rotated key is found) or a static public key;
 * issuer, audience, expiry, not-before and the algorithm allow-list; then the caller from the claims. A verified token
 * is remembered until the sooner of its `exp` and JWT_TOKEN_CACHE_MS, so a repeat call costs a map lookup.
 */
import { createHash } from 'node:crypto';
import type { Caller, KeyVerifier, OutboundGuard } from '@gateway/sdk';
import {
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  importJWK,
  importSPKI,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
  type ProtectedHeaderParameters,
} from 'jose';
import type { JwtSettings } from './settings.ts';
import { invalidToken, tokenError } from './token-errors.ts';
import type { WorkspaceDirectory } from './workspace-directory.ts';

type VerifyKey = Awaited<ReturnType<typeof importSPKI>> | Uint8Array;

/** Tokens kept at most; the oldest goes first. */
const MAX_CACHED_TOKENS = 10_000;
/** Longer input is no token we issue; do not parse megabytes sent as a header. */
const MAX_TOKEN_LENGTH = 16_384;

interface Cached {
  readonly caller: Caller;
  /** Epoch ms after which the token is verified again (or refused: its `exp`). */
  readonly until: number;
}

export interface JwtVerifierOptions {
  /** The outbound guard: the JWKS URL is operator-chosen and is fetched through it like any such URL. */
  readonly guard?: OutboundGuard;
  readonly now?: () => number;
}

/** The key (or JWKS resolver) the settings name. */
async function keyOf(settings: JwtSettings, guard: OutboundGuard | undefined): Promise<VerifyKey | JWTVerifyGetKey> {
  if (settings.jwksUrl) {
    return createRemoteJWKSet(new URL(settings.jwksUrl), {
      cooldownDuration: settings.jwksCooldownMs,
      cacheMaxAge: settings.jwksMaxAgeMs,
      timeoutDuration: settings.jwksTimeoutMs,
      ...(guard ? { [customFetch]: (url: string, init: RequestInit) => guard.fetch(url, init) } : {}),
    });
  }
  const text = settings.publicKey as string;
  if (text.startsWith('{')) {
    const jwk = JSON.parse(text) as JWK;
    const key = await importJWK(jwk, jwk.alg ?? settings.algorithms[0]);
    return key;
  }
  return importSPKI(text.replace(/\\n/g, '\n'), settings.algorithms[0] as string);
}

/** The scopes of a claim: a space-separated string (RFC 8693 `scope`, Entra's `scp`) or an array of strings. */
function scopesOf(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter(Boolean);
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string' && s !== '');
  return [];
}

/** The stable pseudo key id of an issuer's subject: request logs, usage and rate limits group by it (36 characters). */
export function tokenKeyId(issuer: string, subject: string): string {
  return `jwt:${createHash('sha256').update(`${issuer}\n${subject}`).digest('hex').slice(0, 32)}`;
}

export class JwtVerifier implements KeyVerifier {
  readonly stats = { verified: 0, cacheHits: 0, refused: 0 };
  private readonly cache = new Map<string, Cached>();
  private readonly now: () => number;

  private constructor(
    private readonly settings: JwtSettings,
    private readonly key: VerifyKey | JWTVerifyGetKey,
    private readonly workspaces: WorkspaceDirectory,
    now: (() => number) | undefined,
  ) {
    this.now = now ?? Date.now;
  }

  static async create(settings: JwtSettings, workspaces: WorkspaceDirectory, options: JwtVerifierOptions = {}): Promise<JwtVerifier> {
    return new JwtVerifier(settings, await keyOf(settings, options.guard), workspaces, options.now);
  }

  peek(token: string): Caller | undefined {
    const hit = this.cache.get(token);
    if (!hit) return undefined;
    if (hit.until <= this.now()) {
      this.cache.delete(token);
      return undefined;
    }
    this.stats.cacheHits++;
    return hit.caller;
  }

  /** The caller of a valid token; rejects with a descriptive 401 otherwise (503 when the JWKS cannot be fetched). */
  async verify(token: string): Promise<Caller> {
    const cached = this.peek(token);
    if (cached) return cached;
    if (token.length > MAX_TOKEN_LENGTH) throw invalidToken(`the token is longer than ${MAX_TOKEN_LENGTH} characters`);
    let header: ProtectedHeaderParameters;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      this.stats.refused++;
      throw invalidToken('malformed token: its header is not base64url-encoded JSON');
    }
    const s = this.settings;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.key as JWTVerifyGetKey, {
        issuer: s.issuer,
        audience: [...s.audience],
        algorithms: [...s.algorithms],
        clockTolerance: s.clockToleranceSeconds,
        currentDate: new Date(this.now()),
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      this.stats.refused++;
      throw tokenError(error, { kid: header.kid, alg: header.alg, issuer: s.issuer, audience: s.audience, algorithms: s.algorithms });
    }
    const caller = await this.callerOf(payload);
    this.stats.verified++;
    this.remember(token, caller, (payload.exp as number) * 1000);
    return caller;
  }

  private async callerOf(payload: JWTPayload): Promise<Caller> {
    const s = this.settings;
    const workspaceId = payload[s.workspaceClaim];
    if (typeof workspaceId !== 'string' || workspaceId === '') throw invalidToken(`the token has no "${s.workspaceClaim}" claim (the workspace it acts in)`);
    const workspace = await this.workspaces.find(workspaceId);
    if (!workspace) throw invalidToken(`the workspace ${JSON.stringify(workspaceId)} of the "${s.workspaceClaim}" claim does not exist`);
    if (workspace.archived) throw invalidToken(`the workspace ${JSON.stringify(workspaceId)} of the "${s.workspaceClaim}" claim is archived`);
    const user = payload[s.userClaim];
    const userId = typeof user === 'string' && user !== '' ? user : null;
    const subject = userId ?? (typeof payload.sub === 'string' ? payload.sub : workspaceId);
    return Object.freeze({
      apiKeyId: tokenKeyId(payload.iss as string, subject),
      organisationId: workspace.organisationId,
      workspaceId,
      scopes: Object.freeze(scopesOf(payload[s.scopesClaim])),
      keyType: userId === null ? 'workspace-service' : 'workspace-user',
      userId,
    });
  }

  private remember(token: string, caller: Caller, expiresAt: number): void {
    if (this.settings.tokenCacheMs <= 0) return;
    const until = Math.min(expiresAt, this.now() + this.settings.tokenCacheMs);
    if (this.cache.size >= MAX_CACHED_TOKENS) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(token, { caller, until });
  }

  /** Forgets verified tokens (a workspace archived, a key withdrawn from the JWKS). */
  invalidate(): void {
    this.cache.clear();
  }
}
