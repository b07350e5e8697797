/** Turns a TypeBox error path (JSON pointer) into the `param` a client reads: `tools[3].function.name`. */

const PLAIN_KEY = /^[A-Za-z0-9_$-]+$/;

/** Walks the body beside the pointer so array indexes and numeric object keys (logit_bias) are told apart. */
export function toParam(pointer: string, body: unknown): string {
  let param = '';
  let node = body;
  for (const escaped of pointer.split('/').slice(1)) {
    const key = escaped.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(node)) param += `[${key}]`;
    else if (param === '') param = key;
    else param += PLAIN_KEY.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    // Own properties only: a `__proto__` or `constructor` key must not lead into the prototype.
    const owned = typeof node === 'object' && node !== null && Object.hasOwn(node, key);
    node = owned ? (node as Record<string, unknown>)[key] : undefined;
  }
  return param;
}
