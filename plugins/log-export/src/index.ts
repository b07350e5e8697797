/**
 * Log export (docs/observability.md, "Log export"): every request-log row also goes to the sinks the environment
 * names (a webhook, OTLP logs, an S3-compatible bucket), batched and retried off the request's path. No sink is
 * set by default, and then the plugin registers nothing.
 */
import { entryFrom } from '@gateway/plugin-request-log';
import { definePlugin, MetricsServices } from '@gateway/sdk';
import { Batcher, type Sink } from './batcher.ts';
import { otlpLogsSink, s3Sink, webhookSink } from './sinks.ts';
import { readExportSettings } from './settings.ts';

export { Batcher, type Sink } from './batcher.ts';
export { exportRow } from './row.ts';

function renderStats(batchers: readonly Batcher[]): string {
  const lines = [
    '# HELP gateway_log_export_rows_total Request-log rows per export sink: sent, or dropped (queue full, or failed after every retry).',
    '# TYPE gateway_log_export_rows_total counter',
  ];
  for (const b of batchers)
    lines.push(
      `gateway_log_export_rows_total{sink="${b.sink.name}",result="sent"} ${b.stats.sent}`,
      `gateway_log_export_rows_total{sink="${b.sink.name}",result="dropped_queue_full"} ${b.stats.droppedQueueFull}`,
      `gateway_log_export_rows_total{sink="${b.sink.name}",result="dropped_failed"} ${b.stats.droppedFailed}`,
    );
  lines.push('# HELP gateway_log_export_retries_total Batches sent again after a failure.', '# TYPE gateway_log_export_retries_total counter');
  for (const b of batchers) lines.push(`gateway_log_export_retries_total{sink="${b.sink.name}"} ${b.stats.retries}`);
  lines.push('# HELP gateway_log_export_queued Rows waiting for their sink.', '# TYPE gateway_log_export_queued gauge');
  for (const b of batchers) lines.push(`gateway_log_export_queued{sink="${b.sink.name}"} ${b.queued}`);
  return `${lines.join('\n')}\n`;
}

export default definePlugin({
  setup(api) {
    const settings = readExportSettings(api.env);
    const sinks: [Sink, number][] = [];
    if (settings.webhook) sinks.push([webhookSink(settings.webhook.url, settings.webhook.headers), settings.batching.flushMs]);
    if (settings.otlp) sinks.push([otlpLogsSink(settings.otlp.url, settings.otlp.headers, settings.otlp.serviceName), settings.batching.flushMs]);
    if (settings.s3) sinks.push([s3Sink(settings.s3, `${process.pid}-${crypto.randomUUID().slice(0, 8)}`), settings.s3FlushMs]);
    if (sinks.length === 0) return;
    const batchers = sinks.map(([sink, flushMs]) => new Batcher(sink, { ...settings.batching, flushMs }, api.logger));
    api.stage({
      name: 'log-export',
      phase: 'finally',
      rule: 'fire-and-forget',
      // The row as the request log writes it: with the cost the pricing stage attached.
      after: 'pricing',
      run(req, outcome) {
        const entry = entryFrom(req, outcome);
        for (const batcher of batchers) batcher.add(entry);
      },
    });
    api.optional(MetricsServices.sources)?.add(() => renderStats(batchers));
    api.onClose(async () => {
      await Promise.all(batchers.map((b) => b.close()));
    });
    api.logger.info({ sinks: batchers.map((b) => b.sink.name) }, 'request-log export on');
  },
});
