/**
 * API keys: the table, the first key of a new organisation, `apiKeyVerifier` (an ApiKeyVerifier) for the server's
 * authentication step, the /api-keys routes, rotation (manual, and scheduled by a key's policy: service
 * `ApiKeyServices.rotation`), the key e-mails, keys that follow memberships, and the scope catalogue (service
 * `apiKeyScopes`).
 */
import { AdminServices, type OrganisationSettingsService, type LimitServices, type SecretBox, secretBoxFromEnv } from '@gateway/admin-kit';
import { IdentityServices } from '@gateway/admin-identity';
import { defineService, definePlugin, type PluginApi, Services } from '@gateway/sdk';
import { announceAdminKeyFromEnv } from './admin-key-env.ts';
import { bootstrapKey } from './bootstrap.ts';
import { localBaseUrl } from './first-run.ts';
import { ApiKeyClock } from './clock.ts';
import { createMailer, type Mailer, type SmtpSettings, smtpSettings } from './mailer.ts';
import { followMemberships } from './members.ts';
import { KeyNotices } from './notices.ts';
import { DAY_MS } from './policy.ts';
import { RotationScheduler } from './rotation.ts';
import { apiKeyRoutes } from './routes.ts';
import { ScopeCatalogue } from './scopes.ts';
import { ApiKeyStore } from './store.ts';
import { apiKeyMigrations } from './tables.ts';
import { ApiKeyVerifier } from './verifier.ts';

export { applyAdminKeyFromEnv, createAdminKey, findOrganisation, type AdminKeyFromEnv, type CreatedAdminKey } from './admin-key.ts';
export { bootstrapKey, type BootstrapKeyOptions } from './bootstrap.ts';
export { firstRunBanner, localBaseUrl } from './first-run.ts';
export { ApiKeyClock } from './clock.ts';
export { createMailer, smtpSettings, type Mailer, type MailMessage, type SmtpSettings } from './mailer.ts';
export { AUTO_CREATED_KEY_SCOPES } from './members.ts';
export { DEFAULT_TRANSITION_MS, MIN_TRANSITION_MS } from './policy.ts';
export { RotationScheduler, type TickReport } from './rotation.ts';
export { grants, mayRotate, ROTATE_SCOPE_OF, ROTATE_SCOPES, SCOPE_CATALOGUE, ScopeCatalogue, SCOPES } from './scopes.ts';
export { generateSecret, hashSecret, prefixHint } from './secrets.ts';
export { apiKeyMigrations, apiKeys, type ApiKeyRow } from './tables.ts';
export { API_KEY_CHANGES_CHANNEL, ApiKeyVerifier, type ApiKeyVerifierOptions } from './verifier.ts';
export type { ApiKeyView } from './view.ts';

/**
 * A non-negative number of the environment, or the fallback. A malformed value is logged as an error and the
 * fallback used: refusing to load would leave the gateway with no API-key authentication at all.
 */
function envNumber(api: PluginApi, name: string, fallback: number, allowZero = false): number {
  const raw = api.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (Number.isFinite(n) && (n > 0 || (allowZero && n === 0))) return n;
  api.logger.error({ variable: name, value: raw.slice(0, 50), using: fallback }, `${name} must be a ${allowZero ? 'non-negative' : 'positive'} number; using the default`);
  return fallback;
}

/** The SMTP settings, or none (e-mails skipped) when they are malformed, with the reason logged. */
function smtpFromEnv(api: PluginApi): SmtpSettings | undefined {
  try {
    return smtpSettings(api.env);
  } catch (error) {
    api.logger.error({ error: error instanceof Error ? error.message : String(error) }, 'SMTP settings are malformed; API key e-mails are not sent');
    return undefined;
  }
}

/** The services of this plugin that only plugins requiring it (and tests) use. */
export const ApiKeyServices = {
  /** The scheduler of rotations and expiry notices. */
  rotation: defineService<RotationScheduler>('apiKeyRotation'),
  /** The deployment's SMTP mailer (SMTP_*), for the other administration e-mails (usage-limit alerts): one transport. */
  mailer: defineService<Mailer>('mailer'),
} as const;

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(apiKeyMigrations);
    const identity = api.service(IdentityServices.bootstrap);
    const adminApiKey = api.env.GATEWAY_ADMIN_API_KEY || undefined;
    if (identity.created)
      await bootstrapKey(database, identity.organisationId, {
        adminApiKey,
        keyPrefix: api.env.API_KEY_PREFIX || undefined,
        quiet: api.env.LOG_LEVEL === 'silent',
        baseUrl: localBaseUrl(api.env.HOST || '0.0.0.0', /^\d+$/.test(api.env.PORT ?? '') ? Number(api.env.PORT) : 8787),
      });
    else if (adminApiKey) await announceAdminKeyFromEnv(database, adminApiKey, api.logger);

    const clock = new ApiKeyClock();
    const verifier = new ApiKeyVerifier(database, { logger: api.logger, now: () => clock.now() });
    const stopListening = verifier.listen(api.state);
    api.provide(Services.apiKeyVerifier, verifier);
    const scopes = new ScopeCatalogue();
    api.provide(Services.apiKeyScopes, scopes);

    const mailer = createMailer(smtpFromEnv(api), api.logger);
    api.provide(ApiKeyServices.mailer, mailer);
    const notices = new KeyNotices(database, mailer, api.logger);
    let box: SecretBox | undefined;
    const keys = new ApiKeyStore({
      database,
      state: api.state,
      verifier,
      clock,
      keyPrefix: api.env.API_KEY_PREFIX || '',
      // Made on first use: only a scheduled rotation needs it (and a MySQL deployment without a key cannot have it).
      secretBox: () => (box ??= secretBoxFromEnv(api.env)),
    });
    // The settings plugin may load after this one, or not at all.
    let organisationSettings: OrganisationSettingsService | undefined;
    let limits: LimitServices = {};
    api.onReady(() => {
      organisationSettings = api.optional(AdminServices.organisationSettings);
      limits = { usage_limits: api.optional(AdminServices.usageLimits), rate_limits: api.optional(AdminServices.rateLimits) };
    });
    const settings = () => organisationSettings;
    for (const route of apiKeyRoutes({ database, keys, scopes, clock, notices, settings, limits: () => limits })) api.route(route);

    // The identity plugin, which this one requires, provides the events.
    const events = api.optional(AdminServices.events);
    if (events) followMemberships(events, { database, keys, clock, settings, notices, logger: api.logger });
    else api.logger.warn({}, 'no adminEvents service: member keys are neither auto-created nor removed with their member');

    const scheduler = new RotationScheduler(
      { database, keys, notices, clock, logger: api.logger },
      {
        rotationNoticeMs: envNumber(api, 'API_KEY_ROTATION_NOTICE_DAYS', 7) * DAY_MS,
        expiryNoticeMs: envNumber(api, 'API_KEY_EXPIRY_NOTICE_DAYS', 7) * DAY_MS,
      },
    );
    api.provide(ApiKeyServices.rotation, scheduler);
    scheduler.start(envNumber(api, 'API_KEY_SCHEDULER_INTERVAL_MS', 60_000, true));

    api.onClose(async () => {
      scheduler.stop();
      stopListening();
      await notices.flush();
      mailer.close();
      await verifier.flush();
    });
  },
});
