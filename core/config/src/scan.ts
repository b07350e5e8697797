/**
 * A first pass over the raw value, before the schema: it bounds size and nesting (so that neither the compiled
 * schema nor the rules can overflow the stack or spin on a cycle) and finds prototype-polluting keys anywhere,
 * including inside free-form objects the schema does not look into. Iterative on purpose.
 */
import { FORBIDDEN_KEYS } from '@gateway/sdk';
import { formatPath, type PathSegment } from './path.ts';

export const LIMITS = {
  /** Values (objects, arrays, scalars) in one config. */
  maxNodes: 50_000,
  /** JSON nesting anywhere, free-form params included. */
  maxDepth: 128,
  /** Levels of `targets` inside `targets`. */
  maxTargetDepth: 32,
} as const;

export interface ScanResult {
  violations: string[];
  /** Size or depth exceeded: the value must not be walked further. */
  fatal: boolean;
  /** Formatted paths of forbidden keys, so later passes do not report them twice. */
  forbidden: string[];
}

interface Node {
  value: unknown;
  segments: PathSegment[];
  depth: number;
  /** For a config (root or target): how many `targets` levels it sits under. */
  targetDepth?: number;
  /** For the `targets` array of a config: that config's targetDepth. */
  targetsOf?: number;
}

export function scan(root: unknown): ScanResult {
  const violations: string[] = [];
  const forbidden: string[] = [];
  const stop = (violation: string): ScanResult => ({ violations: [...violations, violation], fatal: true, forbidden });
  const stack: Node[] = [{ value: root, segments: [], depth: 0, targetDepth: 0 }];
  let seen = 0;
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    const { value, segments } = node;
    if (++seen > LIMITS.maxNodes) return stop(`config: larger than ${LIMITS.maxNodes} values (or cyclic)`);
    if (node.depth > LIMITS.maxDepth) return stop(`${formatPath(segments)}: nested deeper than ${LIMITS.maxDepth} levels`);
    if ((node.targetDepth ?? 0) > LIMITS.maxTargetDepth) {
      return stop(`${formatPath(segments)}: targets nested deeper than ${LIMITS.maxTargetDepth} levels`);
    }
    const kind = typeof value;
    if (kind === 'function' || kind === 'symbol' || kind === 'bigint') {
      violations.push(`${formatPath(segments)}: not a JSON value`);
      continue;
    }
    if (kind === 'number' && !Number.isFinite(value)) {
      violations.push(`${formatPath(segments)}: not a finite number`);
      continue;
    }
    if (value === null || kind !== 'object') continue;

    const depth = node.depth + 1;
    if (Array.isArray(value)) {
      const targetDepth = node.targetsOf === undefined ? undefined : node.targetsOf + 1;
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push({ value: value[i], segments: [...segments, i], depth, targetDepth });
      }
      continue;
    }
    const keys = Object.keys(value as object);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      const childSegments = [...segments, key];
      if (FORBIDDEN_KEYS.has(key)) {
        const path = formatPath(childSegments);
        forbidden.push(path);
        violations.push(`${path}: forbidden key`);
        continue;
      }
      const targetsOf = key === 'targets' ? node.targetDepth : undefined;
      stack.push({ value: (value as Record<string, unknown>)[key], segments: childSegments, depth, targetsOf });
    }
  }
  return { violations, fatal: false, forbidden };
}
