/**
 * Prometheus series worth alerting on, per provider and model, recorded once per finished call from its outcome
 * (docs/observability.md): errors by code, the call's duration and the provider's, the latency the gateway adds,
 * tokens and cost, cache lookups, retries and fallbacks, rate and usage limit refusals. Recording costs three Map
 * lookups (endpoint, provider, model) into series made once, with their label text; nothing is built per call.
 * Model names come from clients: at most MAX_MODELS_PER_PROVIDER distinct ones per provider get their own series,
 * the rest count as model="other", so a client sending random names cannot grow the exposition without bound.
 */
import { COST_FIGURE, type GatewayRequest, type Outcome } from '@gateway/sdk';

const BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Gateway-added latency is small: finer buckets. */
const OVERHEAD_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
export const MAX_MODELS_PER_PROVIDER = 100;

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly buckets: readonly number[]) {
    this.counts = new Array<number>(buckets.length + 1).fill(0);
  }
  observe(seconds: number): void {
    let i = 0;
    while (i < this.buckets.length && seconds > (this.buckets[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += seconds;
    this.count++;
  }
  render(name: string, labels: string, out: string[]): void {
    let cumulative = 0;
    this.buckets.forEach((le, i) => {
      cumulative += this.counts[i] as number;
      out.push(`${name}_bucket{${labels},le="${le}"} ${cumulative}`);
    });
    out.push(`${name}_bucket{${labels},le="+Inf"} ${this.count}`, `${name}_sum{${labels}} ${this.sum}`, `${name}_count{${labels}} ${this.count}`);
  }
}

/** Everything one endpoint × provider × model feeds. */
class ModelSeries {
  readonly labels: string;
  readonly errors = new Map<string, number>();
  readonly duration = new Histogram(BUCKETS_S);
  readonly upstream = new Histogram(BUCKETS_S);
  readonly overhead = new Histogram(OVERHEAD_BUCKETS_S);
  inputTokens = 0;
  outputTokens = 0;
  costCents = 0;
  retries = 0;
  fallbacks = 0;
  constructor(endpoint: string, provider: string, model: string) {
    this.labels = `endpoint="${escapeLabel(endpoint)}",provider="${escapeLabel(provider)}",model="${escapeLabel(model)}"`;
  }
}

/** Codes of the gateway refusing a call for a limit; a provider's own error (`extra.provider`) is not counted. */
const LIMIT_CODES = new Set(['rate_limit_exceeded', 'usage_limit_exceeded', 'limits_unavailable']);

export class CallMetrics {
  private readonly series = new Map<string, Map<string, Map<string, ModelSeries>>>();
  private readonly all: ModelSeries[] = [];
  private readonly cache = new Map<string, number>();
  private readonly limited = new Map<string, number>();

  observe(req: GatewayRequest, outcome: Outcome): void {
    const provider = outcome.providerId ?? 'none';
    const series = this.seriesOf(req.endpoint, provider, modelOf(req));
    const error = outcome.error;
    if (error) {
      series.errors.set(error.code, (series.errors.get(error.code) ?? 0) + 1);
      if (LIMIT_CODES.has(error.code) && error.extra?.provider === undefined) this.limited.set(error.code, (this.limited.get(error.code) ?? 0) + 1);
    }
    series.duration.observe(outcome.latencyMs / 1000);
    let inAttempts = 0;
    let retries = 0;
    let first = true;
    let fallbacks = 0;
    let lastIndex = '';
    for (const attempt of outcome.attempts) {
      inAttempts += attempt.latencyMs;
      if (attempt.retry > 0) retries++;
      if (!first && attempt.index !== lastIndex) fallbacks++;
      first = false;
      lastIndex = attempt.index;
    }
    series.retries += retries;
    series.fallbacks += fallbacks;
    if (outcome.upstreamLatencyMs !== undefined) series.upstream.observe(outcome.upstreamLatencyMs / 1000);
    // What the gateway added: the call's time outside its provider attempts. A stream's call lasts as long as the
    // stream and its attempts only to the headers, so streams are left out.
    if (outcome.attempts.length && req.body?.stream !== true) series.overhead.observe(Math.max(0, outcome.latencyMs - inAttempts) / 1000);
    const usage = outcome.usage;
    if (usage) {
      series.inputTokens += usage.promptTokens ?? 0;
      series.outputTokens += usage.completionTokens ?? 0;
    }
    const cacheStatus = req.locals.cacheStatus;
    if (typeof cacheStatus === 'string' && cacheStatus !== 'DISABLED') this.cache.set(cacheStatus, (this.cache.get(cacheStatus) ?? 0) + 1);
    // The pricing plugin attaches the cost in its finally stage, which runs synchronously right after this.
    queueMicrotask(() => {
      const cost = outcome.figures.get(COST_FIGURE);
      if (cost) series.costCents += cost.total;
    });
  }

  private seriesOf(endpoint: string, provider: string, model: string): ModelSeries {
    let byProvider = this.series.get(endpoint);
    if (!byProvider) this.series.set(endpoint, (byProvider = new Map()));
    let byModel = byProvider.get(provider);
    if (!byModel) byProvider.set(provider, (byModel = new Map()));
    let series = byModel.get(model);
    if (!series) {
      if (byModel.size >= MAX_MODELS_PER_PROVIDER && model !== 'other') return this.seriesOf(endpoint, provider, 'other');
      series = new ModelSeries(endpoint, provider, model);
      byModel.set(model, series);
      this.all.push(series);
    }
    return series;
  }

  render(): string {
    const out: string[] = [];
    const family = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    family('gateway_errors_total', 'counter', 'Calls that ended in an error, by error code (docs/errors.md).');
    for (const s of this.all) for (const [code, n] of s.errors) out.push(`gateway_errors_total{${s.labels},code="${escapeLabel(code)}"} ${n}`);
    family('gateway_call_duration_seconds', 'histogram', 'Whole call, request to last byte, by endpoint, provider and model.');
    for (const s of this.all) s.duration.render('gateway_call_duration_seconds', s.labels, out);
    family('gateway_provider_duration_seconds', 'histogram', 'Provider time to response headers (the answering attempt), by endpoint, provider and model.');
    for (const s of this.all) if (s.upstream.count) s.upstream.render('gateway_provider_duration_seconds', s.labels, out);
    family('gateway_added_duration_seconds', 'histogram', 'Latency the gateway added: a non-streamed call’s time outside its provider attempts (retry back-offs included).');
    for (const s of this.all) if (s.overhead.count) s.overhead.render('gateway_added_duration_seconds', s.labels, out);
    family('gateway_tokens_total', 'counter', 'Tokens of finished calls, as the providers reported them.');
    for (const s of this.all) {
      if (s.inputTokens) out.push(`gateway_tokens_total{${s.labels},direction="input"} ${s.inputTokens}`);
      if (s.outputTokens) out.push(`gateway_tokens_total{${s.labels},direction="output"} ${s.outputTokens}`);
    }
    family('gateway_cost_usd_cents_total', 'counter', 'Cost of finished calls in US cents (calls of models without a price count nothing).');
    for (const s of this.all) if (s.costCents) out.push(`gateway_cost_usd_cents_total{${s.labels}} ${s.costCents}`);
    family('gateway_retries_total', 'counter', 'Retries of a target (attempts after its first).');
    for (const s of this.all) if (s.retries) out.push(`gateway_retries_total{${s.labels}} ${s.retries}`);
    family('gateway_fallbacks_total', 'counter', 'Moves to another target of the config after one failed.');
    for (const s of this.all) if (s.fallbacks) out.push(`gateway_fallbacks_total{${s.labels}} ${s.fallbacks}`);
    family('gateway_cache_lookups_total', 'counter', 'Response cache lookups by result (HIT, MISS, SEMANTIC_HIT, SEMANTIC_MISS, REFRESH).');
    for (const [status, n] of this.cache) out.push(`gateway_cache_lookups_total{result="${escapeLabel(status)}"} ${n}`);
    family('gateway_limit_rejections_total', 'counter', 'Calls the gateway refused for a rate or usage limit (or limits it could not check), by code.');
    for (const [code, n] of this.limited) out.push(`gateway_limit_rejections_total{code="${escapeLabel(code)}"} ${n}`);
    return `${out.join('\n')}\n`;
  }
}

function modelOf(req: GatewayRequest): string {
  const model = req.body?.model;
  return typeof model === 'string' && model.length <= 200 ? model : 'none';
}
