/** Deep Object.freeze: parsed configs are shared by every request that sends the same header. Iterative, no cycles expected. */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || Object.isFrozen(node)) continue;
    Object.freeze(node);
    for (const child of Object.values(node)) stack.push(child);
  }
  return value;
}
