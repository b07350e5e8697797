/**
 * Decoupled JWT authentication of gateway calls (docs/jwt.md): with JWT_JWKS_URL or JWT_PUBLIC_KEY set, provides
 * `jwtVerifier`, which the server asks for every JWT-shaped gateway key (`x-gateway-api-key`, or
 * `Authorization: Bearer` without it). Off otherwise, and then a JWT is refused saying so.
 */
import { definePlugin, Services } from '@gateway/sdk';
import { readJwtSettings } from './settings.ts';
import { JwtVerifier } from './verifier.ts';
import { DatabaseWorkspaceDirectory } from './workspace-directory.ts';

export { readJwtSettings, type JwtSettings } from './settings.ts';
export { JwtVerifier, tokenKeyId } from './verifier.ts';
export { DatabaseWorkspaceDirectory, type WorkspaceDirectory } from './workspace-directory.ts';

export default definePlugin({
  async setup(api) {
    const settings = readJwtSettings(api.env);
    if (!settings) return;
    const directory = new DatabaseWorkspaceDirectory(api.service(Services.database));
    const verifier = await JwtVerifier.create(settings, directory, { guard: api.service(Services.hostGuard) });
    api.provide(Services.jwtVerifier, verifier);
    api.logger.info({ jwks: settings.jwksUrl ?? null, issuer: settings.issuer, audience: settings.audience }, 'JWT authentication of gateway calls is on');
  },
});
