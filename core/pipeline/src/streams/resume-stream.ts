import type { GatewayError, StreamResumption } from '@gateway/sdk';
import { ContinuationProcessor } from './continuation.ts';
import type { StreamProcessor } from './processors.ts';
import type { ContinuedStream } from './relay.ts';

/**
 * The relay's `continueAfter` for a committed chat stream (issue #15): asks the engine's resumption for the next
 * attempt with the text the client has, and rewrites that attempt's stream for this client (continuation.ts). Each
 * continuation carries its own resumption, so a stream that breaks again is continued again while the config has
 * attempts left.
 */
export function streamContinuer(resumption: StreamResumption, showUsage: boolean) {
  let current = resumption;
  return async (broken: GatewayError, processor: StreamProcessor): Promise<ContinuedStream | undefined> => {
    const sent = processor.sent;
    if (!sent?.continuable || !current.resume) return undefined;
    const next = await current.resume(broken, sent.text);
    const body = next.response.body;
    if (next.error || next.answer || !next.continuation || !next.resumption || !body) {
      body?.cancel().catch(() => {});
      return undefined;
    }
    current = next.resumption;
    return { stream: body, processor: new ContinuationProcessor(next.providerId, sent, next.continuation, processor.usage, showUsage) };
  };
}
