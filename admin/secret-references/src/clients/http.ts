/**
 * The one way clients reach a manager: through the gateway's outbound guard (the URL came from an admin: its host is
 * resolved once, every address checked, and the connection goes to the checked address), redirects not followed
 * (they would lead to a URL nobody checked), and every call with a deadline.
 */
import { GatewayError, type JsonObject, type OutboundGuard } from '@gateway/sdk';
import { ManagerFailure } from '../errors.ts';

export interface ClientContext {
  /** The gateway's guard; absent only in a bare harness (then: a plain fetch). */
  hostGuard?: OutboundGuard;
  timeoutMs: number;
}

function refused(error: GatewayError): ManagerFailure {
  return new ManagerFailure(`the manager URL is refused: ${error.message}`);
}

export async function send(manager: string, url: string, init: RequestInit, ctx: ClientContext): Promise<Response> {
  let response: Response;
  try {
    const request = { ...init, redirect: 'manual', signal: AbortSignal.timeout(ctx.timeoutMs) } satisfies RequestInit;
    response = await (ctx.hostGuard ? ctx.hostGuard.fetch(url, request) : fetch(url, request));
  } catch (error) {
    if (error instanceof GatewayError) throw refused(error);
    const name = error instanceof Error ? error.name : '';
    if (name === 'TimeoutError' || name === 'AbortError') throw new ManagerFailure(`${manager} did not answer within ${ctx.timeoutMs} ms`, true);
    const code = typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : name || 'network error';
    throw new ManagerFailure(`${manager} could not be reached (${code})`, true);
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    throw new ManagerFailure(`${manager} answered with a redirect (${response.status}), which is not followed`);
  }
  return response;
}

/** The answer's JSON object, or a failure saying it could not be read. Never echoes the body. */
export async function readObject(manager: string, response: Response): Promise<JsonObject> {
  const text = await response.text().catch(() => {
    throw new ManagerFailure(`${manager}'s answer broke off`, true);
  });
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as JsonObject;
  } catch {
    // fall through
  }
  throw new ManagerFailure(`${manager} sent an answer that is not a JSON object (HTTP ${response.status})`, response.status >= 500);
}

/** A status worth another try later. */
export const transient = (status: number) => status === 429 || status >= 500;

/** A manager's own words, cut short: enough to diagnose, never a body. */
export function short(text: unknown, max = 200): string {
  return typeof text === 'string' ? text.replace(/\s+/g, ' ').slice(0, max) : '';
}
