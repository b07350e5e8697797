/**
 * Policy conditions and group_by, compiled once into matchers (no parsing per call), and the index that finds the
 * policies of a call by its organisation and workspace, so a call costs what the policies that concern it cost.
 *
 * Conditions: every key given must match (AND); several conditions with the same key match any of their values
 * (OR). group_by: a counter per distinct value of the keys, together; none: one counter for everything the
 * conditions match.
 */
import type { CallFacts } from './facts.ts';

export interface PolicyCondition {
  readonly key: string;
  readonly value: string;
}

export interface PolicyGroupBy {
  readonly key: string;
}

export const CONDITION_KEYS: readonly string[] = ['workspace_id', 'api_key', 'endpoint_type', 'provider', 'model', 'metadata.<key>'];
export const GROUP_BY_KEYS: readonly string[] = ['api_key', 'workspace_id', 'user', 'metadata.<key>'];

const METADATA = 'metadata.';
const FIXED_CONDITIONS = new Set(['workspace_id', 'api_key', 'endpoint_type', 'provider', 'model']);
const FIXED_GROUPS = new Set(['api_key', 'workspace_id', 'user']);

const isMetadataKey = (key: string) => key.startsWith(METADATA) && key.length > METADATA.length;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Violations of a `conditions` value (`conditions[0].key: …`), none when it is a valid list. */
export function conditionViolations(value: unknown, path = 'conditions'): string[] {
  if (!Array.isArray(value)) return [`${path}: must be an array of {key, value}`];
  const out: string[] = [];
  value.forEach((c, i) => {
    if (!isObject(c) || typeof c.key !== 'string' || typeof c.value !== 'string' || Object.keys(c).some((k) => k !== 'key' && k !== 'value'))
      out.push(`${path}[${i}]: must be {key: string, value: string}`);
    else if (!FIXED_CONDITIONS.has(c.key) && !isMetadataKey(c.key)) out.push(`${path}[${i}].key: must be one of ${CONDITION_KEYS.join(', ')}`);
    else if (c.value.length === 0 || c.value.length > 512) out.push(`${path}[${i}].value: must be 1 to 512 characters`);
  });
  if (value.length > 50) out.push(`${path}: at most 50 conditions`);
  return out;
}

/** Violations of a `group_by` value, none when it is a valid list of distinct keys. */
export function groupByViolations(value: unknown, path = 'group_by'): string[] {
  if (!Array.isArray(value)) return [`${path}: must be an array of {key}`];
  const out: string[] = [];
  const seen = new Set<string>();
  value.forEach((g, i) => {
    if (!isObject(g) || typeof g.key !== 'string' || Object.keys(g).some((k) => k !== 'key')) out.push(`${path}[${i}]: must be {key: string}`);
    else if (!FIXED_GROUPS.has(g.key) && !isMetadataKey(g.key)) out.push(`${path}[${i}].key: must be one of ${GROUP_BY_KEYS.join(', ')}`);
    else if (seen.has(g.key)) out.push(`${path}[${i}].key: ${g.key} is given twice`);
    else seen.add(g.key);
  });
  if (value.length > 10) out.push(`${path}: at most 10 keys`);
  return out;
}

type Read = (facts: CallFacts) => string | undefined;

function reader(key: string): Read {
  switch (key) {
    case 'workspace_id':
      return (f) => f.workspaceId;
    case 'api_key':
      return (f) => f.apiKeyId;
    case 'endpoint_type':
      return (f) => f.endpointType;
    case 'provider':
      return (f) => f.provider;
    case 'model':
      return (f) => f.model;
    case 'user':
      return (f) => f.userId ?? undefined;
  }
  const name = key.slice(METADATA.length);
  return (f) => f.metadata[name];
}

export interface Matcher {
  /** Whether a call's facts meet every condition. */
  matches(facts: CallFacts): boolean;
  /** The call's group (its counter's part of the key): '' without group_by. */
  groupOf(facts: CallFacts): string;
  /** The workspaces a `workspace_id` condition allows, undefined without one (for the index). */
  readonly workspaces: ReadonlySet<string> | undefined;
}

/** Compiles conditions and group_by (already validated) into a matcher: Set lookups per call. */
export function compileMatcher(conditions: readonly PolicyCondition[], groupBy: readonly PolicyGroupBy[]): Matcher {
  const byKey = new Map<string, Set<string>>();
  for (const c of conditions) {
    let values = byKey.get(c.key);
    if (!values) byKey.set(c.key, (values = new Set()));
    values.add(c.value);
  }
  const checks = [...byKey].map(([key, values]) => {
    const read = reader(key);
    // A provider condition names the adapter (`openai`) or the `@slug` / name the target gave.
    if (key === 'provider') return (f: CallFacts) => values.has(f.provider) || (f.providerAlias !== undefined && values.has(f.providerAlias));
    return (f: CallFacts) => {
      const v = read(f);
      return v !== undefined && values.has(v);
    };
  });
  const groups = groupBy.map((g) => reader(g.key));
  return {
    workspaces: byKey.get('workspace_id'),
    matches: (f) => {
      for (const check of checks) if (!check(f)) return false;
      return true;
    },
    // A missing value (no such metadata, a service key's user) is a group of its own: '-'.
    groupOf: groups.length === 0 ? () => '' : groups.length === 1 ? (f) => encode(groups[0]!(f)) : (f) => groups.map((read) => encode(read(f))).join('|'),
  };
}

/** A group value in a counter key: `|` and `%` escaped so that two groups never share a key. */
function encode(value: string | undefined): string {
  if (value === undefined) return '-';
  return value.includes('|') || value.includes('%') || value === '-' ? `%${encodeURIComponent(value)}` : value;
}

/** A policy as the index holds it: where it applies and how it matches. */
export interface Indexed<P> {
  readonly policy: P;
  readonly organisationId: string;
  /** The policy's own workspace; null for an organisation-wide policy. */
  readonly workspaceId: string | null;
  readonly matcher: Matcher;
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * Policies by where they can apply: a workspace's own policies and the organisation's policies whose conditions
 * name that workspace under the workspace, the other organisation-wide ones under the organisation. A call looks at
 * two lists and checks only their policies. Immutable: rebuilt when the policies change.
 */
export class PolicyIndex<P> {
  private readonly byWorkspace = new Map<string, Indexed<P>[]>();
  private readonly byOrganisation = new Map<string, Indexed<P>[]>();
  readonly size: number;

  constructor(entries: Iterable<Indexed<P>>) {
    let size = 0;
    for (const entry of entries) {
      size++;
      const put = (map: Map<string, Indexed<P>[]>, key: string) => {
        const list = map.get(key);
        if (list) list.push(entry);
        else map.set(key, [entry]);
      };
      if (entry.workspaceId) put(this.byWorkspace, entry.workspaceId);
      else if (entry.matcher.workspaces) for (const ws of entry.matcher.workspaces) put(this.byWorkspace, ws);
      else put(this.byOrganisation, entry.organisationId);
    }
    this.size = size;
  }

  /** The policies whose conditions the call meets; a shared empty list when none. */
  match(facts: CallFacts): readonly Indexed<P>[] {
    const local = this.byWorkspace.get(facts.workspaceId);
    const wide = this.byOrganisation.get(facts.organisationId);
    if (!local && !wide) return NONE;
    let out: Indexed<P>[] | undefined;
    for (const list of [local, wide]) {
      if (!list) continue;
      for (const entry of list) {
        if (entry.organisationId !== facts.organisationId || !entry.matcher.matches(facts)) continue;
        (out ??= []).push(entry);
      }
    }
    return out ?? NONE;
  }
}
