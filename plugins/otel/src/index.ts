/**
 * OpenTelemetry traces (docs/observability.md). Off unless OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set: then, and only then, the OpenTelemetry packages are imported and the
 * span stages registered, so a gateway without a collector loads nothing of them and runs no stage of this plugin.
 */
import { definePlugin, MetricsServices } from '@gateway/sdk';
import { readOtelSettings } from './settings.ts';

const VERSION = '0.1.0';

export default definePlugin({
  async setup(api) {
    const settings = readOtelSettings(api.env);
    if (!settings) return;
    const [{ startTracing }, { spanStages }, { renderExportStats }] = await Promise.all([
      import('./exporter.ts'),
      import('./stages.ts'),
      import('./metrics.ts'),
    ]);
    const tracing = startTracing(settings, VERSION);
    const stages = spanStages(tracing.tracer, settings.captureBodies);
    for (const stage of [...stages.request, ...stages.attempt, ...stages.response, stages.finally]) api.stage(stage);
    api.optional(MetricsServices.sources)?.add(() => renderExportStats(tracing.stats));
    // Spans still queued are sent at shutdown (bounded by the export timeout).
    api.onClose(() => tracing.shutdown());
    api.logger.info({ endpoint: settings.url, protocol: settings.protocol, bodies: settings.captureBodies }, 'OpenTelemetry traces on');
  },
});
