export { type CallFacts, ENDPOINT_TYPES, endpointTypeOf, factsOf } from './facts.ts';
export { type FailMode, failModeOf } from './fail-mode.ts';
export {
  CONDITION_KEYS,
  compileMatcher,
  conditionViolations,
  GROUP_BY_KEYS,
  groupByViolations,
  type Indexed,
  type Matcher,
  type PolicyCondition,
  type PolicyGroupBy,
  PolicyIndex,
} from './match.ts';
export { counterKey, LIMIT_UNITS, type LimitUnit, type LimitWindow, limitsClock, UNIT_MS, windowOf } from './window.ts';
export { SubjectIndex, type SubjectKind, type SubjectOf, type VirtualKeySlugs } from './subjects.ts';
