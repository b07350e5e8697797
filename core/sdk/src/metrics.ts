import { defineService } from './services.ts';

/**
 * Series a plugin adds to GET /metrics (Prometheus text exposition). The host provides the service before any
 * setup; a plugin adds one `render` in `setup` and the host calls it at each scrape, never per request, so a plugin
 * keeps plain counters and builds the text only when scraped.
 */
export interface MetricsSources {
  /** `render` returns whole metric families (HELP and TYPE lines included), each line ending in `\n`. */
  add(render: () => string): void;
}

export const MetricsServices = {
  sources: defineService<MetricsSources>('metricsSources'),
};
