/**
 * Token usage from a response body, read when the log is written (never on the request's path): a JSON answer's
 * `usage`, or for a streamed (SSE) answer the last `data:` event that carries one.
 */

export interface Usage {
  promptTokens: number | null;
  completionTokens: number | null;
  totalTokens: number | null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : null);

/** OpenAI chat/completions names, or the responses API's input/output names. */
function fromUsage(value: unknown): Usage | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const u = value as Record<string, unknown>;
  const prompt = num(u.prompt_tokens) ?? num(u.input_tokens);
  const completion = num(u.completion_tokens) ?? num(u.output_tokens);
  const total = num(u.total_tokens) ?? (prompt !== null && completion !== null ? prompt + completion : null);
  if (prompt === null && completion === null && total === null) return undefined;
  return { promptTokens: prompt, completionTokens: completion, totalTokens: total };
}

/** `usage` at the top, or inside `response` (responses API stream events). */
function fromObject(value: unknown): Usage | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const o = value as { usage?: unknown; response?: { usage?: unknown } };
  return fromUsage(o.usage) ?? fromUsage(o.response?.usage);
}

/** Scans backwards for `"usage"` so that only the few last events are parsed, however long the stream. */
function fromSse(body: string): Usage | undefined {
  let at = body.lastIndexOf('"usage"');
  while (at >= 0) {
    const lineStart = body.lastIndexOf('\n', at) + 1;
    const lineEnd = body.indexOf('\n', at);
    const line = body.slice(lineStart, lineEnd < 0 ? body.length : lineEnd).trim();
    if (line.startsWith('data:')) {
      try {
        const usage = fromObject(JSON.parse(line.slice(5)));
        if (usage) return usage;
      } catch {
        // A cut or non-JSON event: look further back.
      }
    }
    if (lineStart === 0) return undefined;
    at = body.lastIndexOf('"usage"', lineStart - 1);
  }
  return undefined;
}

export function extractUsage(body: string | undefined): Usage | undefined {
  if (!body) return undefined;
  const first = body.trimStart()[0];
  if (first === '{' || first === '[') {
    try {
      return fromObject(JSON.parse(body));
    } catch {
      return undefined;
    }
  }
  return fromSse(body);
}
