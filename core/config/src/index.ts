export { validateConfig, type ConfigValidation } from './validate.ts';
export { configValidator } from './validator.ts';
export { parseConfigHeader, setSavedConfigResolver, clearConfigCache, type SavedConfigResolver } from './parse.ts';
export { GUARDRAIL_POLICY_KEYS, parseParamPath, WILDCARD, FORBIDDEN_KEYS, type ParamPathSegment, type ParamPathResult } from '@gateway/sdk';
export { setSavedGuardrailResolver, type GuardrailScope, type SavedGuardrail, type SavedGuardrailResolver } from './field-rules.ts';
export { LIMITS as CONFIG_LIMITS } from './scan.ts';
export { assembleConfig, loadedConfig, useLoadedFields, type FieldSources, type LoadedConfig } from './fields.ts';
