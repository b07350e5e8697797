import type { GatewayConfig, TargetConfig } from '@gateway/sdk';

/** Generic settings a target takes from its parent unless it sets its own (issue: routing and resilience). */
const GENERIC_INHERITED = [
  'retry',
  'request_timeout',
  'first_token_timeout',
  'stream_idle_timeout',
  'custom_host',
  'forward_headers',
  'strict_wire_compliance',
  'drop_params',
] as const;
/** Object-valued settings merged key by key, the child's keys winning. */
const MERGED = ['override_params', 'default_params'] as const;

type Config = Record<string, unknown>;

/**
 * How a target inherits from its parent: the generic settings, and the fields the loaded plugins declare inherited
 * (`ConfigFieldSet.inherited`: the cache's `cache`, the circuit breaker's `cb_config`, the hook lists). Built once
 * at start-up; each node's children are computed once per (shared, frozen) config object.
 */
export class Inheritance {
  private readonly keys: readonly string[];
  private readonly effective = new WeakMap<GatewayConfig, TargetConfig[]>();

  /** `declared`: the plugins' inherited fields (`LoadedConfig.inherited` of @gateway/config). */
  constructor(declared: Iterable<string> = []) {
    this.keys = [...new Set<string>([...GENERIC_INHERITED, ...declared])];
  }

  /** The child with what it inherits from `parent`; the child itself when it inherits nothing. */
  inherit(parent: GatewayConfig, child: TargetConfig): TargetConfig {
    const p = parent as Config;
    const c = child as Config;
    let out: Config | undefined;
    for (const key of this.keys) {
      if (p[key] !== undefined && c[key] === undefined) (out ??= { ...c })[key] = p[key];
    }
    for (const key of MERGED) {
      const from = parent[key];
      if (from === undefined) continue;
      const own = child[key];
      (out ??= { ...c })[key] = own === undefined ? from : { ...from, ...own };
    }
    return (out as TargetConfig | undefined) ?? child;
  }

  /** The children of a node with inheritance applied. */
  targets(node: GatewayConfig): TargetConfig[] {
    let children = this.effective.get(node);
    if (!children) {
      children = (node.targets ?? []).map((child) => this.inherit(node, child));
      this.effective.set(node, children);
    }
    return children;
  }
}

/** The generic settings only: a pipeline that no plugin declared inherited fields for. */
export const GENERIC_INHERITANCE = new Inheritance();
