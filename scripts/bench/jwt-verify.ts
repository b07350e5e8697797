/**
 * JWT authentication of a gateway call (admin/jwt-auth): what verifying a token's signature and claims costs per call
 * (ES256 and RS256 through jose, with the key already fetched), against the verified-token cache that answers a repeat
 * token (`peek`). The figures decide whether the cache pays (docs/jwt.md, "Cost").
 */
import { JwtVerifier, readJwtSettings, type WorkspaceDirectory } from '@gateway/admin-jwt-auth';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { best, budget, check, figure } from './measure.ts';

const directory: WorkspaceDirectory = { find: async () => ({ organisationId: 'org', archived: false }) };

async function verifierAndToken(alg: 'ES256' | 'RS256', cacheMs: string) {
  const pair = await generateKeyPair(alg, { extractable: true });
  const settings = readJwtSettings({
    JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey),
    JWT_ISSUER: 'https://idp.bench',
    JWT_AUDIENCE: 'gateway',
    JWT_ALGORITHMS: alg,
    JWT_TOKEN_CACHE_MS: cacheMs,
  });
  if (!settings) throw new Error('settings expected');
  const verifier = await JwtVerifier.create(settings, directory);
  const token = await new SignJWT({ workspace_id: 'ws', scope: 'completions.write' })
    .setProtectedHeader({ alg })
    .setIssuer('https://idp.bench')
    .setAudience('gateway')
    .setSubject('user')
    .setExpirationTime('1h')
    .sign(pair.privateKey);
  return { verifier, token };
}

const es = await verifierAndToken('ES256', '0');
const rs = await verifierAndToken('RS256', '0');
const cached = await verifierAndToken('ES256', '60000');
await cached.verifier.verify(cached.token);
check((await es.verifier.verify(es.token)).workspaceId === 'ws', 'ES256 token verifies');
check((await rs.verifier.verify(rs.token)).workspaceId === 'ws', 'RS256 token verifies');
check(cached.verifier.peek(cached.token) !== undefined, 'the cached token is answered by peek');

const t = await best(3, 2_000, {
  es256: () => es.verifier.verify(es.token),
  rs256: () => rs.verifier.verify(rs.token),
  peek: () => cached.verifier.peek(cached.token),
});
figure('verify ES256 (signature + claims, no cache), per call', t.es256);
figure('verify RS256 (signature + claims, no cache), per call', t.rs256);
budget('cached token (peek), per call', t.peek, 2);
