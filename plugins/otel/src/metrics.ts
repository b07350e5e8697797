import type { ExportStats } from './exporter.ts';

/** The exporter's counters as Prometheus text, built at each scrape of GET /metrics. */
export function renderExportStats(stats: ExportStats): string {
  return [
    '# HELP gateway_otel_spans_exported_total Spans the OTLP exporter delivered to the collector.',
    '# TYPE gateway_otel_spans_exported_total counter',
    `gateway_otel_spans_exported_total ${stats.exported}`,
    '# HELP gateway_otel_spans_dropped_total Spans dropped: the batch queue was full, or an export failed after its retries (collector down).',
    '# TYPE gateway_otel_spans_dropped_total counter',
    `gateway_otel_spans_dropped_total{reason="queue_full"} ${stats.droppedQueueFull}`,
    `gateway_otel_spans_dropped_total{reason="export_failed"} ${stats.droppedExportFailed}`,
    '# HELP gateway_otel_spans_queued Spans ended and waiting for (or in) an export.',
    '# TYPE gateway_otel_spans_queued gauge',
    `gateway_otel_spans_queued ${stats.pending}`,
    '',
  ].join('\n');
}
