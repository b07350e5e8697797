/** Violation paths in the dot/bracket form of INTERFACE.md: `targets[1].cb_config.cooldown_interval`. */
export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** The root itself is called `config`. */
export function formatPath(segments: readonly PathSegment[]): string {
  if (segments.length === 0) return 'config';
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/**
 * Turns a JSON pointer (TypeBox error paths) into segments. The value is consulted because `/0` is an index only
 * when the parent is an array; an object may well have a key "0".
 */
export function pointerToSegments(pointer: string, root: unknown): PathSegment[] {
  if (pointer === '') return [];
  const segments: PathSegment[] = [];
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const isIndex = Array.isArray(node) && /^\d+$/.test(key);
    segments.push(isIndex ? Number(key) : key);
    node = node !== null && typeof node === 'object' && Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined;
  }
  return segments;
}
