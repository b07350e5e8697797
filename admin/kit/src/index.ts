export { requireOrgAdmin, requireWorkspaceRole } from './access.ts';
export { AdminEvents, type AdminEventMap, type AdminEventName, type AdminEventResults } from './events.ts';
export { csv, DEFAULT_PAGE_SIZE, iso, json, list, MAX_PAGE_SIZE, noContent, page, type Page } from './respond.ts';
export { StoredSnapshot, type SnapshotOptions } from './snapshot.ts';
export { reindex, type Stamped, type StoredIndex, type VersionedRow } from './stored-index.ts';
export { invalidBody, validator, type BodyValidator } from './validate.ts';
export { type SealedAt, SealedValueError, secretBoxFromEnv, SecretBox } from './crypto.ts';
export { rebindSealed, type SealedColumns } from './sealed-rebind.ts';
export {
  formatPath,
  joinSecrets,
  MASK,
  openSecrets,
  restoreMasked,
  sealSecrets,
  splitSecrets,
  type JsonPath,
  type SecretPairs,
  type StoredDocument,
} from './masked-secrets.ts';
export { changedDestinations, type DeclaredFields, declaredFields, type DocumentFields, loadedDocumentFields } from './declared-fields.ts';
export { AdminServices, lazySecretBox } from './services.ts';
export { type LimitFields, type LimitServices, prepareLimits, type PreparedFields, removeLimits, saveLimits, withLimits } from './subject-limits.ts';
export { checkSlug, freeSlug, generatedSlug, isUuid, SLUG_PATTERN, slugBase, slugFromName, type SlugRule, writeWithSlug } from './slug.ts';
export { conflictOnUnique, isUniqueViolation } from './unique.ts';
export {
  setPath,
  type KeySettings,
  type OrganisationSettingsService,
  type RotationPeriod,
  type SecretMapping,
  type SecretResolver,
  type SecuritySettings,
  type SecuritySettingsService,
  type LimitSubject,
  type LimitSubjectRef,
  limitSubjectKey,
  type PreparedLimits,
  type RateLimitView,
  type SubjectLimits,
  type SubjectRateLimits,
  type SubjectUsageLimits,
  type UsageLimitsView,
} from './contracts.ts';
export { asGatewayError, DEFAULT_TOOL_MAX_ANSWER_BYTES, jsonRpcError, jsonRpcErrorMessage, readCappedText, RPC_GATEWAY_REFUSED, RPC_INTERNAL_ERROR, toolMaxAnswerBytes } from './json-rpc.ts';
export { checkHeaderMappings, HEADER_NAME, resolveMappedHeaders } from './mapped-headers.ts';
export { describeToolCall, stringsIn, textIn, type ToolCallFields, type ToolCallServices, toolCallServices } from './tool-calls.ts';
