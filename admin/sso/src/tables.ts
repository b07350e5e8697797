/** SSO's tables: the OpenID provider of each organisation, logins under way, and sessions (their secrets hashed). */
import { col, defineTable, type Migration } from '@gateway/sdk';

export const ssoProviders = defineTable(
  'sso_providers',
  {
    id: col.id(),
    organisation_id: col.ref().unique(),
    issuer: col.string(1024),
    client_id: col.string(255),
    /** Sealed with GATEWAY_ENCRYPTION_KEY (SecretBox), bound to this row. */
    client_secret: col.text(),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
);

/** A sign-in between the redirect to the provider and its callback: the state is the id, single use. */
export const ssoLogins = defineTable('sso_logins', {
  id: col.id(),
  organisation_id: col.ref(),
  code_verifier: col.string(128),
  nonce: col.string(128),
  created_at: col.timestamp().default(Date.now),
});

export const ssoSessions = defineTable(
  'sso_sessions',
  {
    id: col.id(),
    organisation_id: col.ref(),
    user_id: col.ref(),
    /** SHA-256 of the cookie's secret: the database never holds a usable session. */
    token_hash: col.string(64).unique(),
    created_at: col.timestamp().default(Date.now),
    revoked_at: col.timestamp().nullable(),
  },
  { indexes: [{ columns: ['organisation_id', 'user_id'] }] },
);

export const ssoMigrations: Migration[] = [{ id: 'sso/0001-providers-logins-sessions', tables: [ssoProviders, ssoLogins, ssoSessions] }];
