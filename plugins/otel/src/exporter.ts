/**
 * The OpenTelemetry pipeline, imported only when tracing is on (index.ts): a tracer provider with a
 * BatchSpanProcessor and the OTLP/HTTP exporter. Spans leave in batches from a timer, never on a request's path;
 * a collector that is slow or down only makes spans be dropped, and every dropped span is counted.
 */
import type { Context, Tracer } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanExporter, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { OtelSettings } from './settings.ts';

/** What /metrics shows of the exporter (metrics.ts). */
export interface ExportStats {
  exported: number;
  /** The batch queue was full (the collector is slower than the traffic, or down for long). */
  droppedQueueFull: number;
  /** An export failed after the exporter's own retries (collector down, refused, timed out). */
  droppedExportFailed: number;
  /** Spans ended and not yet through an export. */
  pending: number;
}

/** Counts what the exporter sends and what fails. */
class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly stats: ExportStats,
  ) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      this.stats.pending -= spans.length;
      if (result.code === ExportResultCode.SUCCESS) this.stats.exported += spans.length;
      else this.stats.droppedExportFailed += spans.length;
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * In front of the BatchSpanProcessor: a span that would overflow its queue is dropped here and counted (the
 * processor drops such spans silently), so the processor's own limit is never reached.
 */
class BoundedProcessor implements SpanProcessor {
  constructor(
    private readonly inner: SpanProcessor,
    private readonly stats: ExportStats,
    private readonly maxQueueSize: number,
  ) {}
  onStart(span: Span, parent: Context): void {
    this.inner.onStart(span, parent);
  }
  onEnd(span: ReadableSpan): void {
    if (this.stats.pending >= this.maxQueueSize) {
      this.stats.droppedQueueFull++;
      return;
    }
    this.stats.pending++;
    this.inner.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

export interface Tracing {
  tracer: Tracer;
  stats: ExportStats;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export function startTracing(settings: OtelSettings, version: string): Tracing {
  const stats: ExportStats = { exported: 0, droppedQueueFull: 0, droppedExportFailed: 0, pending: 0 };
  const options = { url: settings.url, headers: settings.headers, timeoutMillis: settings.exportTimeoutMs };
  const exporter = new CountingExporter(settings.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options), stats);
  const batch = new BatchSpanProcessor({
    exporter,
    maxQueueSize: settings.maxQueueSize,
    maxExportBatchSize: Math.min(settings.maxExportBatchSize, settings.maxQueueSize),
    scheduledDelayMillis: settings.scheduledDelayMs,
    exportTimeoutMillis: settings.exportTimeoutMs,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ ...settings.resourceAttributes, 'service.name': settings.serviceName, 'service.version': version }),
    spanProcessors: [new BoundedProcessor(batch, stats, settings.maxQueueSize)],
  });
  return {
    tracer: provider.getTracer('@gateway/plugin-otel', version),
    stats,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
