/**
 * How the gateway reaches an agent integration's upstream: every request goes through the OutboundGuard (service
 * `hostGuard`), which resolves the host and refuses a private, loopback or metadata address (unless trusted) before
 * any connection, and never follows a redirect. The credential headers are built per call (credentials.ts).
 */
import { readCappedText } from '@gateway/admin-kit';
import { Errors, GatewayError, type OutboundGuard } from '@gateway/sdk';
import type { IntegrationRow } from './present.ts';

/** guard.fetch with a failure to connect as a 502 naming the agent (a refused host stays the guard's 400). */
export async function guardedFetch(guard: OutboundGuard, url: string, init: RequestInit, who: string): Promise<Response> {
  try {
    return await guard.fetch(url, init);
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw Errors.upstreamUnreachable(`agent ${who}`, error instanceof Error ? error.message : String(error));
  }
}

/** Where the agent card is looked for, in order: the integration's own card URL, or the A2A well-known paths. */
export function cardUrls(row: IntegrationRow): string[] {
  if (row.agent_card_url) return [row.agent_card_url];
  const origin = new URL(row.url).origin;
  return [`${origin}/.well-known/agent-card.json`, `${origin}/.well-known/agent.json`];
}

const CARD_LIMIT = 1_048_576;


/**
 * The upstream's agent card (JSON object), fetched through the guard; 502 when no URL gives one.
 * `credentials`: the integration's credential headers for the workspace asking (credentials.ts).
 */
export async function fetchAgentCard(guard: OutboundGuard, row: IntegrationRow, credentials: Record<string, string>, signal?: AbortSignal): Promise<{ card: Record<string, unknown>; url: string }> {
  const headers = { accept: 'application/json', ...credentials };
  let last = 'no answer';
  for (const url of cardUrls(row)) {
    const res = await guardedFetch(guard, url, { method: 'GET', headers, signal }, row.slug);
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      last = `${url} answered ${res.status}`;
      continue;
    }
    const text = await readCappedText(res, CARD_LIMIT);
    if (text === undefined) throw Errors.upstreamInvalid('a2a', `The agent card at ${url} is larger than 1 MiB`);
    let card: unknown;
    try {
      card = JSON.parse(text);
    } catch {
      throw Errors.upstreamInvalid('a2a', `The agent card at ${url} is not JSON`);
    }
    if (card === null || typeof card !== 'object' || Array.isArray(card)) throw Errors.upstreamInvalid('a2a', `The agent card at ${url} is not a JSON object`);
    return { card: card as Record<string, unknown>, url };
  }
  throw Errors.upstreamUnreachable(`agent ${row.slug}`, `no agent card: ${last}`);
}
