/**
 * Which circuit a target belongs to, and where circuit breaking is configured at all.
 *
 * A circuit is identified by a SHA-256 (hex) of the target's identity: provider, custom_host, the target's path in
 * the config (`config.targets[1].targets[0]`) and a SHA-256 of its credentials. Nothing here depends on the
 * process, so every gateway process computes the same id for the same config, and no credential is ever stored in
 * clear (the state store only sees hashes).
 */
import { createHash } from 'node:crypto';
import type { GatewayConfig, TargetConfig } from '@gateway/sdk';

export type CbConfig = NonNullable<GatewayConfig['cb_config']>;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** JSON with object keys sorted at every depth, so that equal values always give the same text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** Fields that carry a target's credentials or account (the `svc*` provider settings: keys, regions, projects). */
const isCredentialField = (key: string) => key === 'api_key' || key === 'virtual_key' || key === 'Authorization' || key.startsWith('svc');

/** SHA-256 of the target's own credential fields (credentials a request supplies by header are not part of it). */
export function credentialsHash(target: TargetConfig): string {
  const creds: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(target)) if (value !== undefined && isCredentialField(key)) creds[key] = value;
  return sha256(canonicalJson(creds));
}

/** The circuit id of a leaf target at `index`, given its effective (inherited) custom_host. */
export function circuitId(target: TargetConfig, index: string, customHost: string | undefined): string {
  return sha256(JSON.stringify(['cb/1', target.provider ?? null, customHost ?? null, index, credentialsHash(target)]));
}

const ids = new WeakMap<object, Map<string, string>>();

/** `circuitId`, computed once per (config object, path, custom_host): configs are parsed once and shared. */
export function cachedCircuitId(target: TargetConfig, index: string, customHost: string | undefined): string {
  let byIndex = ids.get(target);
  if (!byIndex) ids.set(target, (byIndex = new Map()));
  const k = customHost === undefined ? index : `${index}\u0000${customHost}`;
  let id = byIndex.get(k);
  if (id === undefined) {
    id = circuitId(target, index, customHost);
    byIndex.set(k, id);
  }
  return id;
}

const configured = new WeakMap<GatewayConfig, boolean>();

/** Whether a config node or anything under it has a `cb_config`; once per config object. */
export function hasCircuitBreaker(node: GatewayConfig): boolean {
  let answer = configured.get(node);
  if (answer === undefined) {
    answer = node.cb_config !== undefined || (node.targets ?? []).some((child) => hasCircuitBreaker(child));
    configured.set(node, answer);
  }
  return answer;
}

/** A node of the config tree with the settings it inherits (same rule as the pipeline: the child's own value wins). */
export interface NodeAt {
  node: TargetConfig;
  cb: CbConfig | undefined;
  customHost: string | undefined;
}

const STEP = /\.targets\[(\d+)\]/y;

/** Finds the node at a path such as `config.targets[1].targets[0]`; undefined when the path does not fit the config. */
export function nodeAt(config: GatewayConfig, index: string): NodeAt | undefined {
  if (!index.startsWith('config')) return undefined;
  let node: TargetConfig = config;
  let cb = config.cb_config;
  let customHost = config.custom_host;
  let pos = 'config'.length;
  while (pos < index.length) {
    STEP.lastIndex = pos;
    const step = STEP.exec(index);
    if (!step) return undefined;
    const child: TargetConfig | undefined = node.targets?.[Number(step[1])];
    if (!child) return undefined;
    cb = child.cb_config ?? cb;
    customHost = child.custom_host ?? customHost;
    node = child;
    pos = STEP.lastIndex;
  }
  return { node, cb, customHost };
}
