/**
 * The sinks. Their URLs come from the operator's environment (not from configs or requests), so they are fetched
 * directly, not through the private-address guard (docs/plugins.md, "Outbound URLs"). Each send has a deadline.
 */
import { AwsClient } from 'aws4fetch';
import type { ExportRow } from './row.ts';
import type { Sink } from './batcher.ts';

const SEND_TIMEOUT_MS = 10_000;

async function expectOk(response: Response, what: string): Promise<void> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${what} answered ${response.status}: ${text.slice(0, 200)}`);
}

/** POST `{"rows": [...]}` as JSON. */
export function webhookSink(url: string, headers: Record<string, string>): Sink {
  return {
    name: 'webhook',
    async send(rows) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ rows }),
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      });
      await expectOk(response, 'webhook');
    },
  };
}

/** OTLP/HTTP logs in the JSON protocol: one log record per row, its JSON as the body, its keys as attributes. */
export function otlpLogsSink(url: string, headers: Record<string, string>, serviceName: string): Sink {
  const attribute = (key: string, value: unknown) =>
    typeof value === 'number' ? { key, value: Number.isInteger(value) ? { intValue: value } : { doubleValue: value } } : { key, value: { stringValue: String(value) } };
  return {
    name: 'otlp',
    async send(rows) {
      const logRecords = rows.map((row) => ({
        timeUnixNano: `${BigInt(Date.parse(String(row.created_at))) * 1_000_000n}`,
        severityNumber: (row.status as number) >= 500 ? 17 : (row.status as number) >= 400 ? 13 : 9,
        severityText: (row.status as number) >= 500 ? 'ERROR' : (row.status as number) >= 400 ? 'WARN' : 'INFO',
        body: { stringValue: JSON.stringify(row) },
        attributes: ['trace_id', 'workspace_id', 'provider', 'model', 'endpoint', 'status', 'latency_ms', 'cost_cents']
          .filter((k) => row[k] !== null && row[k] !== undefined)
          .map((k) => attribute(`gateway.${k}`, row[k])),
      }));
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({
          resourceLogs: [
            {
              resource: { attributes: [attribute('service.name', serviceName)] },
              scopeLogs: [{ scope: { name: '@gateway/plugin-log-export' }, logRecords }],
            },
          ],
        }),
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      });
      await expectOk(response, 'OTLP logs endpoint');
    },
  };
}

export interface S3Target {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  prefix: string;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** One JSONL object per batch: `<prefix>YYYY/MM/DD/HHMMSS-<instance>-<n>.jsonl`, path-style, SigV4-signed. */
export function s3Sink(target: S3Target, instance: string): Sink {
  const client = new AwsClient({
    accessKeyId: target.accessKeyId,
    secretAccessKey: target.secretAccessKey,
    ...(target.sessionToken ? { sessionToken: target.sessionToken } : {}),
    service: 's3',
    region: target.region,
    retries: 0,
  });
  let sequence = 0;
  return {
    name: 's3',
    async send(rows: ExportRow[]) {
      const now = new Date();
      const key = `${target.prefix}${now.getUTCFullYear()}/${pad(now.getUTCMonth() + 1)}/${pad(now.getUTCDate())}/${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}-${instance}-${++sequence}.jsonl`;
      const body = new TextEncoder().encode(`${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
      const url = `${target.endpoint}/${encodeURIComponent(target.bucket)}/${key.split('/').map(encodeURIComponent).join('/')}`;
      const response = await client.fetch(url, {
        method: 'PUT',
        body,
        headers: { 'content-type': 'application/x-ndjson', 'x-amz-content-sha256': new Bun.CryptoHasher('sha256').update(body).digest('hex') },
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      });
      await expectOk(response, 'S3 PUT');
    },
  };
}
