/**
 * What observability costs per call (docs/observability.md): recording a finished call's Prometheus series
 * (core/server/src/call-metrics.ts, run once per call after its answer was sent), and, with OpenTelemetry on, making
 * a call's spans (plugins/otel: the call span, one attempt span, the finally stage's attributes; export is batched
 * off the call). Off, the otel plugin registers no stage: it costs nothing.
 */
import type { AttemptResult, Outcome } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { startTracing } from '../../plugins/otel/src/exporter.ts';
import { readOtelSettings } from '../../plugins/otel/src/settings.ts';
import { spanStages } from '../../plugins/otel/src/stages.ts';
import { CallMetrics } from '../../core/server/src/call-metrics.ts';
import { best, budget, check, figure } from './measure.ts';

const body = '{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}';
const usage = { promptTokens: 9, completionTokens: 3, totalTokens: 12 };
const figures = new Map<unknown, unknown>();
const outcome = {
  status: 200,
  providerId: 'openai',
  targetIndex: 'config',
  latencyMs: 120,
  upstreamLatencyMs: 110,
  responseBody: body,
  error: undefined,
  attempts: [{ index: 'config', providerId: 'openai', retry: 0, status: 200, latencyMs: 115 }],
  usage,
  figures: { get: (t: unknown) => figures.get(t), set: (t: unknown, v: unknown) => void figures.set(t, v) },
} as unknown as Outcome;
const req = buildGatewayRequest({ body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });

const metrics = new CallMetrics();
metrics.observe(req, outcome);
check(metrics.render().includes('gateway_tokens_total{endpoint="chatComplete",provider="openai",model="gpt-4o-mini",direction="input"} 9'), 'the call is recorded');

// A collector nobody listens on, a queue large enough that nothing is dropped and a delay long enough that nothing is
// exported while measuring: the figure is the spans' making, not their export.
const settings = readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_BSP_MAX_QUEUE_SIZE: '1000000', OTEL_BSP_SCHEDULE_DELAY: '3600000' });
check(settings !== undefined, 'tracing settings');
const tracing = startTracing(settings!, 'bench');
const stages = spanStages(tracing.tracer, false);
const attemptStage = stages.attempt[0]!;
const settled = Promise.resolve({ body: undefined });
const result = { response: new Response(null), status: 200, providerId: 'openai', settled } as AttemptResult;
const attempt = { index: 'config', target: {}, provider: { id: 'openai', baseUrl: () => '', authorize: (c: unknown) => c, endpoints: {} }, retry: 0, body: req.body } as never;
async function traced(): Promise<void> {
  const r = buildGatewayRequest({ body: req.body });
  stages.request[0]!.run(r);
  await attemptStage.run(r, attempt, async () => result);
  stages.finally.run(r, outcome);
}
await traced();
check(tracing.stats.pending >= 2, 'spans were ended and queued');

const t = await best(3, 20_000, { observe: () => metrics.observe(req, outcome), traced, request: () => buildGatewayRequest({ body: req.body }) });
budget('metrics: record a finished call, per call', t.observe, 3);
figure('building the test request alone (included in the next figure)', t.request);
budget('traces on: a call span, an attempt span and their attributes, per call', t.traced, 60);
await tracing.shutdown().catch(() => undefined);
process.exit(process.exitCode ?? 0);
