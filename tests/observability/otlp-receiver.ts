/**
 * A local OTLP/HTTP receiver for tests: accepts POST /v1/traces in the JSON protocol (OTLP/JSON, what the gateway
 * sends with OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and decodes every span with its attributes; a protobuf request
 * (the default protocol) is answered and its content type recorded.
 */

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  status: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: KeyValue[];
  status?: { code?: number };
}
interface TracesRequest {
  resourceSpans: { resource?: { attributes?: KeyValue[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

const decodeValue = (v: AnyValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? v.arrayValue?.values?.map(decodeValue);

const attributesOf = (list: KeyValue[] | undefined): Record<string, unknown> => Object.fromEntries((list ?? []).map(({ key, value }) => [key, decodeValue(value)]));

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the requests received. */
  contentTypes: string[];
  /** Resolves once spans matching `predicate` number at least `count` (hang guard: rejects after `timeoutMs`). */
  waitFor(predicate: (span: ReceivedSpan) => boolean, count?: number, timeoutMs?: number): Promise<ReceivedSpan[]>;
  stop(): void;
}

export function startOtlpReceiver(): OtlpReceiver {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      if (request.method !== 'POST' || new URL(request.url).pathname !== '/v1/traces') return new Response('not found', { status: 404 });
      contentTypes.push(request.headers.get('content-type') ?? '');
      // The protobuf protocol is only recognised (its bytes are not decoded here): the tests decode OTLP/JSON.
      if (request.headers.get('content-type') === 'application/x-protobuf') return new Response(new Uint8Array(0), { headers: { 'content-type': 'application/x-protobuf' } });
      const body = (await request.json()) as TracesRequest;
      for (const rs of body.resourceSpans) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans)
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              kind: s.kind,
              startMs: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
              endMs: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
              status: s.status?.code ?? 0,
              attributes: attributesOf(s.attributes),
              resource,
            });
      }
      return Response.json({});
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    spans,
    contentTypes,
    async waitFor(predicate, count = 1, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = spans.filter(predicate);
        if (found.length >= count) return found;
        if (Date.now() > deadline) throw new Error(`expected ${count} matching spans, got ${found.length} of ${spans.length}: ${spans.map((s) => s.name).join(', ')}`);
        await Bun.sleep(20);
      }
    },
    stop: () => void server.stop(true),
  };
}
