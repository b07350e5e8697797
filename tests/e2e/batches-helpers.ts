/** Shared by the batch suites: input files, waiting for a batch, counting what the provider received per line. */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import type { RecordedRequest } from '../mocks/openai-server.ts';

/** A chat batch input of `count` lines; the lines in `failing` name a model the provider does not have. */
export function chatLines(count: number, failing: ReadonlySet<number> = new Set()): string {
  const out: string[] = [];
  for (let i = 1; i <= count; i++) {
    const model = failing.has(i) ? 'no-such-model' : 'gpt-4o-mini';
    out.push(JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: `line ${i}` }] } }));
  }
  return `${out.join('\n')}\n`;
}

export async function uploadBatchFile(client: OpenAI, text: string, name = 'input.jsonl') {
  return client.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'batch' });
}

const FINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** Polls until the batch is in a final state (or `until` holds); a hang guard, not a timing assertion. */
export async function waitForBatch(client: OpenAI, id: string, until: (b: OpenAI.Batches.Batch) => boolean = (b) => FINAL.has(b.status), guardMs = 60_000) {
  const deadline = Date.now() + guardMs;
  for (;;) {
    const batch = await client.batches.retrieve(id);
    if (until(batch)) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${batch.status} (${JSON.stringify(batch.request_counts)})`);
    await Bun.sleep(50);
  }
}

/** How many times the provider received each line (by the `line N` text of its message). */
export function receivedPerLine(requests: readonly RecordedRequest[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const r of requests) {
    const match = /"line (\d+)"/.exec(r.body);
    if (!match || !r.path.endsWith('/chat/completions')) continue;
    const n = Number(match[1]);
    counts.set(n, (counts.get(n) ?? 0) + 1);
  }
  return counts;
}

/** The lines of a JSONL file's text, parsed. */
export function jsonl(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The HTTP status an SDK call failed with (the SDK's promises are not plain promises for `expect().rejects`). */
export async function statusOf(call: PromiseLike<unknown>): Promise<number | 'resolved'> {
  try {
    await call;
    return 'resolved';
  } catch (error) {
    return (error as { status?: number }).status ?? -1;
  }
}
