/**
 * The protocol's answer computed from a request already reduced to neutral terms; each provider's test server maps
 * its native request to `NeutralRequest` and the `NeutralAnswer` back to its native response.
 */
import { CONFORMANCE_ERROR_MODEL, expectedText, wordCount } from './protocol.ts';

export interface NeutralRequest {
  model: string;
  system: string[];
  /** user and assistant turns in order; `tool` for a tool result */
  turns: { role: 'user' | 'assistant' | 'tool'; text: string; images?: number }[];
  tools: string[];
  jsonMode: boolean;
  stop: string[];
}

export type NeutralAnswer =
  | { kind: 'error' }
  | { kind: 'tools'; calls: { name: string; args: string }[]; inputTokens: number; outputTokens: number }
  | { kind: 'text'; text: string; inputTokens: number; outputTokens: number };

export function answer(req: NeutralRequest): NeutralAnswer {
  if (req.model === CONFORMANCE_ERROR_MODEL) return { kind: 'error' };
  const inputTokens = wordCount([...req.system, ...req.turns.map((t) => t.text)].join(' '));
  const last = req.turns[req.turns.length - 1];
  const lastUser = [...req.turns].reverse().find((t) => t.role === 'user');
  if (req.tools.length && last?.role === 'user' && last.text.includes('weather')) {
    const calls = [{ name: req.tools[0] as string, args: '{"city":"Paris"}' }];
    if (req.tools.length > 1 && last.text.includes('both')) calls.push({ name: req.tools[1] as string, args: '{"city":"Rome"}' });
    return { kind: 'tools', calls, inputTokens, outputTokens: 5 * calls.length };
  }
  let text: string;
  if (last?.role === 'tool') text = `Tool said: ${last.text}`;
  else if (req.jsonMode) text = JSON.stringify({ answer: lastUser?.text ?? '' });
  else {
    const images = req.turns.reduce((n, t) => n + (t.images ?? 0), 0);
    const turns = req.turns.filter((t) => t.role !== 'tool').length;
    text = expectedText({ system: req.system.join(' '), images, turns, stop: req.stop, lastUser: lastUser?.text ?? '' });
  }
  return { kind: 'text', text, inputTokens, outputTokens: wordCount(text) };
}

/** Text in pieces of at most 8 characters, as the protocol asks of streams. */
export function pieces(text: string, size = 8): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}
