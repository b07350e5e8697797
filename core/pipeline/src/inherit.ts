import type { GatewayConfig, TargetConfig } from '@gateway/sdk';

/** Settings a target takes from its parent unless it sets its own (issue: routing and resilience). */
const INHERITED = [
  'retry',
  'cache',
  'cb_config',
  'request_timeout',
  'custom_host',
  'forward_headers',
  'strict_wire_compliance',
  'drop_params',
  'before_request_hooks',
  'after_request_hooks',
  'input_guardrails',
  'output_guardrails',
] as const;
/** Object-valued settings merged key by key, the child's keys winning. */
const MERGED = ['override_params', 'default_params'] as const;

export function inherit(parent: GatewayConfig, child: TargetConfig): TargetConfig {
  let out: TargetConfig | undefined;
  for (const key of INHERITED) {
    if (parent[key] !== undefined && child[key] === undefined) (out ??= { ...child })[key] = parent[key] as never;
  }
  for (const key of MERGED) {
    const p = parent[key];
    if (p === undefined) continue;
    const c = child[key];
    (out ??= { ...child })[key] = (c === undefined ? p : { ...p, ...c }) as never;
  }
  return out ?? child;
}

const effective = new WeakMap<GatewayConfig, TargetConfig[]>();

/** The children of a node with inheritance applied, computed once per (shared, frozen) config object. */
export function effectiveTargets(node: GatewayConfig): TargetConfig[] {
  let children = effective.get(node);
  if (!children) {
    children = (node.targets ?? []).map((child) => inherit(node, child));
    effective.set(node, children);
  }
  return children;
}
