/**
 * The conformance protocol: what every provider's local test server answers, in that provider's own wire format,
 * so that one table of cases (cases.ts) runs against every provider through the gateway with the openai SDK.
 *
 * A test server speaks the provider's documented API byte for byte and computes its answer from the request it
 * received (translated by the gateway into the provider's format), by these rules, checked in this order:
 *
 * 1. model `conformance-error` → the provider's native error answer, HTTP 400, message `conformance: bad request`.
 * 2. the request offers tools and the last user text contains `weather` → one tool call to the first tool, name as
 *    given, arguments exactly `{"city":"Paris"}`, finish reason = the provider's "tool use" reason. With two tools
 *    offered and the text containing `both`, two parallel calls: the first tool with `{"city":"Paris"}`, the second
 *    with `{"city":"Rome"}`.
 * 3. the last message is a tool result → text `Tool said: <tool result content>`.
 * 4. JSON mode (the provider's native JSON / schema switch) → text `{"answer":"<last user text>"}`.
 * 5. otherwise text built from parts joined by ` | `, in this order, each only when it applies:
 *    `System: <system text>` (system and developer messages, joined by a space),
 *    `Images: <n>` (image parts received, n ≥ 1),
 *    `Turns: <n>` (number of user + assistant turns, when more than 1),
 *    `Stop: <sequences joined by ,>` (when stop sequences were sent),
 *    `You said: <last user text>`.
 *    Finish reason: the provider's "end of turn" reason.
 * Usage: input tokens = number of words in all text received; output tokens = number of words in the answer text
 * (a tool call counts 5); where the provider reports cached input tokens the server reports 2, and where it reports
 * reasoning tokens 3. Streaming: the same answer split into the provider's native stream events, text in pieces of
 * at most 8 characters, tool-call arguments in at least two pieces.
 * Embeddings: for each input string, a vector of 8 numbers: [length, 1, 2, 3, 4, 5, 6, 7] / 10.
 */
export const CONFORMANCE_ERROR_MODEL = 'conformance-error';
export const ERROR_MESSAGE = 'conformance: bad request';

export function expectedText(parts: {
  system?: string;
  images?: number;
  turns?: number;
  stop?: string[];
  lastUser: string;
}): string {
  const out: string[] = [];
  if (parts.system) out.push(`System: ${parts.system}`);
  if (parts.images) out.push(`Images: ${parts.images}`);
  if (parts.turns && parts.turns > 1) out.push(`Turns: ${parts.turns}`);
  if (parts.stop?.length) out.push(`Stop: ${parts.stop.join(',')}`);
  out.push(`You said: ${parts.lastUser}`);
  return out.join(' | ');
}

export function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

export function embeddingFor(input: string): number[] {
  return [input.length, 1, 2, 3, 4, 5, 6, 7].map((n) => n / 10);
}
