/**
 * The scope check of gateway calls: a key may call a kind of route only with a scope GATEWAY_CALL_SCOPES declares
 * for it. Runs after authentication and before the body is read, so a refused key reaches no provider.
 */
import { ALL_SCOPES, type Caller, type EndpointKind, Errors, GATEWAY_CALL_SCOPES } from '@gateway/sdk';

const KINDS = Object.keys(GATEWAY_CALL_SCOPES) as EndpointKind[];

/**
 * The kinds each key may call, by its scopes array. The verifier hands out one frozen array per cached key, so this
 * is computed once per key and every request costs a WeakMap and a Set lookup.
 */
const allowedKinds = new WeakMap<readonly string[], ReadonlySet<EndpointKind>>();

function kindsOf(scopes: readonly string[]): ReadonlySet<EndpointKind> {
  const granted = new Set(scopes);
  if (granted.has(ALL_SCOPES)) return new Set(KINDS);
  return new Set(KINDS.filter((kind) => GATEWAY_CALL_SCOPES[kind].some((scope) => granted.has(scope))));
}

/** Whether the caller's key may make a call of this kind. */
export function mayCall(caller: Caller, endpoint: EndpointKind): boolean {
  let kinds = allowedKinds.get(caller.scopes);
  if (!kinds) allowedKinds.set(caller.scopes, (kinds = kindsOf(caller.scopes)));
  return kinds.has(endpoint);
}

/** Throws 403 `forbidden` naming the scope(s) the call needs, unless the caller's key holds one. */
export function checkCallScope(caller: Caller, endpoint: EndpointKind): void {
  if (mayCall(caller, endpoint)) return;
  const needed = GATEWAY_CALL_SCOPES[endpoint].join(' or ');
  throw Errors.forbidden(`This API key may not make this call: it needs the ${needed} scope`);
}
