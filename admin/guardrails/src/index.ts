/**
 * Saved guardrails (docs/admin/guardrails.md): the saved_guardrails table, the /guardrails routes, and the
 * in-memory set behind service `savedGuardrails` (string entries of input_guardrails / output_guardrails, for the
 * hook engine and config validation) and `GuardrailServices.store` (saved configs).
 */
import { loadedDocumentFields, type DocumentFields, lazySecretBox, rebindSealed } from '@gateway/admin-kit';
import { definePlugin, Services } from '@gateway/sdk';
import { type GuardrailReferences, GuardrailServices } from './contracts.ts';
import { guardrailRoutes, SCOPES } from './routes.ts';
import { GuardrailStore } from './store.ts';
import { guardrailMigrations, savedGuardrails } from './tables.ts';

export { GuardrailServices, type GuardrailReference, type GuardrailReferences } from './contracts.ts';
export { entryViolations } from './entry.ts';
export { GuardrailStore, type SavedGuardrailStore, type StoredGuardrail } from './store.ts';
export { guardrailRoutes, SCOPES } from './routes.ts';
export { guardrailMigrations, guardrailSecretsAt, savedGuardrails, ORGANISATION_SCOPE } from './tables.ts';

const notReady = (): never => {
  throw new Error('guardrails: a route was called before the gateway was ready');
};

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(guardrailMigrations);
    // Only a guardrail with secrets needs the key (GATEWAY_ENCRYPTION_KEY, or the SQLite key file).
    const getBox = lazySecretBox(api.env);
    // Secrets sealed before they were bound to their rows are bound now (admin-kit sealed-rebind.ts).
    await rebindSealed(database, { table: savedGuardrails, fields: ['secrets'] }, getBox, api.logger);
    const validator = api.service(Services.configValidator);
    const store = new GuardrailStore({ database, state: api.state, box: getBox, logger: api.logger, onChange: () => validator.clearCache() });
    await store.start();
    api.onClose(() => store.stop());
    api.provide(Services.savedGuardrails, store.resolve);
    api.provide(GuardrailServices.store, store);
    // Once ready: the saved-config plugin may load after this one, or not at all.
    let references: GuardrailReferences | undefined;
    // Once every plugin declared its fields: which keys of an entry are secrets, and which decide where they go.
    let fields: DocumentFields | undefined;
    api.onReady(() => {
      fields = loadedDocumentFields(api);
      references = api.optional(GuardrailServices.references);
      // Keys may be given these scopes (the api-keys plugin's catalogue has them already; adding is idempotent).
      api.optional(Services.apiKeyScopes)?.add(SCOPES);
    });
    for (const route of guardrailRoutes({ database, store, box: getBox, references: () => references, validator, fields: () => fields ?? notReady() })) api.route(route);
  },
});
