/** Shared by the request-log durability tests: traffic through a gateway process, and its log pipeline's state. */
import type { GatewayProcess } from '../helpers/gateway-process.ts';

/** `count` chat calls, `concurrency` at a time, each with its own trace id `<prefix>-<i>`; returns the statuses. */
export async function load(gw: GatewayProcess, mockUrl: string, prefix: string, count: number, concurrency = 8): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': gw.adminKey,
          'x-gateway-provider': 'openai',
          'x-gateway-custom-host': mockUrl,
          authorization: 'Bearer sk-test',
          'x-gateway-trace-id': `${prefix}-${i}`,
        },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `durable ${i}` }] }),
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return statuses;
}

/** The request log's series from GET /metrics (`name` or `name{labels}` → value). */
export async function logMetrics(gw: GatewayProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^(gateway_request_log_[a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) out[match[1]!] = Number(match[2]);
  }
  return out;
}

export const droppedOf = (m: Record<string, number>) =>
  Object.entries(m)
    .filter(([k]) => k.startsWith('gateway_request_log_rows_dropped_total'))
    .reduce((sum, [, v]) => sum + v, 0);

export async function health(gw: GatewayProcess): Promise<{ status: string; reason?: string; requestLog?: { reasons: string[] } }> {
  return (await fetch(`${gw.url}/health`)).json() as Promise<{ status: string; reason?: string; requestLog?: { reasons: string[] } }>;
}

export async function until<V>(what: string, probe: () => Promise<V | undefined | false>, timeoutMs: number): Promise<V> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await Bun.sleep(100);
  }
}
