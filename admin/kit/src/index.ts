export { requireOrgAdmin, requireWorkspaceRole } from './access.ts';
export { AdminEvents, type AdminEventMap, type AdminEventName, type AdminEventResults } from './events.ts';
export { csv, DEFAULT_PAGE_SIZE, iso, json, list, MAX_PAGE_SIZE, noContent, page, type Page } from './respond.ts';
export { StoredSnapshot, type SnapshotOptions } from './snapshot.ts';
export { validator, type BodyValidator } from './validate.ts';
export { secretBoxFromEnv, SecretBox } from './crypto.ts';
export {
  setPath,
  type KeySettings,
  type OrganisationSettingsService,
  type RotationPeriod,
  type SecretMapping,
  type SecretResolver,
  type SecuritySettings,
  type SecuritySettingsService,
} from './contracts.ts';
