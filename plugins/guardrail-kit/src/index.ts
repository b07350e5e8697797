export { compileParameters, httpUrl, urlRule, type CompiledParameters, type Parsed } from './params.ts';
export { guardHostsWith, postJson, redact, type CallOptions, type CallResult, type ServiceError, type ServiceErrorKind } from './http.ts';
export { textOf } from './text.ts';
export { failedVerdict, invalidParameters, type CheckResult } from './verdict.ts';
