/**
 * Prometheus metrics kept in memory: counters and histograms with fixed buckets, rendered on GET /metrics. Not
 * prom-client: it would be a dependency for three series, and its `inc(labels)` / `observe(labels)` hash and validate
 * the label object on every call, where a request here costs two Map lookups and builds no string.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Errors } from '@gateway/sdk';

const BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000];

class Histogram {
  readonly counts = new Array<number>(BUCKETS_MS.length + 1).fill(0);
  sum = 0;
  count = 0;
  observe(ms: number): void {
    let i = 0;
    while (i < BUCKETS_MS.length && ms > (BUCKETS_MS[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += ms;
    this.count++;
  }
}

interface Series {
  byStatus: Map<number, { labels: string; count: number }>;
  latency: Histogram;
  upstream: Histogram;
}

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export class Metrics {
  private readonly requests = new Map<string, { labels: string; count: number }>();
  private readonly latency = new Map<string, { labels: string; h: Histogram }>();
  private readonly upstream = new Map<string, { labels: string; h: Histogram }>();
  private readonly started = Date.now();

  /** Per endpoint and provider, the series they feed: found with two Map lookups and no string building. */
  private readonly series = new Map<string, Map<string, Series>>();

  record(endpoint: string, provider: string | undefined, status: number, latencyMs: number, upstreamMs: number | undefined): void {
    const p = provider ?? 'none';
    let byProvider = this.series.get(endpoint);
    if (!byProvider) this.series.set(endpoint, (byProvider = new Map()));
    let series = byProvider.get(p);
    if (!series) {
      series = {
        byStatus: new Map(),
        latency: this.histogram(this.latency, `${endpoint}|${p}`, () => `endpoint="${escapeLabel(endpoint)}",provider="${escapeLabel(p)}"`),
        upstream: this.histogram(this.upstream, p, () => `provider="${escapeLabel(p)}"`),
      };
      byProvider.set(p, series);
    }
    let counter = series.byStatus.get(status);
    if (!counter) {
      counter = { labels: `endpoint="${escapeLabel(endpoint)}",provider="${escapeLabel(p)}",status="${status}"`, count: 0 };
      series.byStatus.set(status, counter);
      this.requests.set(`${endpoint}|${p}|${status}`, counter);
    }
    counter.count++;
    series.latency.observe(latencyMs);
    if (upstreamMs !== undefined) series.upstream.observe(upstreamMs);
  }

  /** Label strings are built once per series, not per request. */
  private histogram(map: Map<string, { labels: string; h: Histogram }>, key: string, labels: () => string): Histogram {
    let entry = map.get(key);
    if (!entry) {
      entry = { labels: labels(), h: new Histogram() };
      map.set(key, entry);
    }
    return entry.h;
  }

  render(): string {
    const lines: string[] = [
      '# HELP gateway_requests_total Requests handled, by endpoint, provider and status.',
      '# TYPE gateway_requests_total counter',
    ];
    for (const { labels, count } of this.requests.values()) lines.push(`gateway_requests_total{${labels}} ${count}`);
    const hist = (name: string, help: string, map: Map<string, { labels: string; h: Histogram }>) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
      for (const { labels, h } of map.values()) {
        let cumulative = 0;
        BUCKETS_MS.forEach((le, i) => {
          cumulative += h.counts[i] as number;
          lines.push(`${name}_bucket{${labels},le="${le / 1000}"} ${cumulative}`);
        });
        lines.push(`${name}_bucket{${labels},le="+Inf"} ${h.count}`);
        lines.push(`${name}_sum{${labels}} ${h.sum / 1000}`, `${name}_count{${labels}} ${h.count}`);
      }
    };
    hist('gateway_request_duration_seconds', 'Time from request to the whole answer sent.', this.latency);
    hist('gateway_upstream_duration_seconds', 'Time from calling a provider to its response headers.', this.upstream);
    lines.push(
      '# HELP gateway_uptime_seconds Seconds since the process started.',
      '# TYPE gateway_uptime_seconds gauge',
      `gateway_uptime_seconds ${(Date.now() - this.started) / 1000}`,
    );
    return `${lines.join('\n')}\n`;
  }
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * GET /metrics. With METRICS_TOKEN set the scraper must send `Authorization: Bearer <token>` (401 otherwise): the
 * series name every provider, endpoint and status the gateway serves. Compared in constant time, over digests so
 * that not even the token's length shows. Without a token the endpoint stays open (local use).
 */
export function metricsEndpoint(metrics: Metrics, token: string | undefined, more?: () => string): (request: Request) => Response {
  const expected = token === undefined ? undefined : digest(`Bearer ${token}`);
  return (request) => {
    if (expected && !timingSafeEqual(digest(request.headers.get('authorization') ?? ''), expected))
      return Errors.unauthorized('GET /metrics needs Authorization: Bearer <METRICS_TOKEN>').toResponse({ 'www-authenticate': 'Bearer' });
    // `more`: series a plugin keeps (the request log's queue and journal), in the same exposition.
    return new Response(more ? metrics.render() + more() : metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4' } });
  };
}
