import { describe, expect, test } from 'bun:test';
import { parseKeyValues, readOtelSettings } from './settings.ts';

describe('readOtelSettings', () => {
  test('off without an endpoint, with OTEL_SDK_DISABLED, or with a traces exporter other than otlp', () => {
    expect(readOtelSettings({})).toBeUndefined();
    expect(readOtelSettings({ OTEL_SERVICE_NAME: 'x' })).toBeUndefined();
    expect(readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'console,otlp' })).toBeDefined();
  });

  test('the base endpoint gets /v1/traces; the traces endpoint is used as is', () => {
    expect(readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })?.url).toBe('http://c:4318/v1/traces');
    expect(readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t/x' })?.url).toBe('https://t/x');
  });

  test('defaults: protobuf, the batch processor’s standard sizes, no bodies', () => {
    expect(readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual({
      url: 'http://c:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      serviceName: 'ai-gateway',
      resourceAttributes: {},
      exportTimeoutMs: 10_000,
      scheduledDelayMs: 5000,
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
      captureBodies: false,
    });
  });

  test('headers, resource attributes, timeouts and refused values', () => {
    const s = readOtelSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=a%20b,tenant=t',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,deployment.environment=prod',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2000',
      GATEWAY_OTEL_CAPTURE_BODIES: 'ON',
    });
    expect(s?.headers).toEqual({ 'x-api-key': 'a b', tenant: 't' });
    expect(s?.serviceName).toBe('from-resource');
    expect(s?.exportTimeoutMs).toBe(2000);
    expect(s?.captureBodies).toBe(true);
    expect(() => readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/http\/protobuf or http\/json/);
    expect(() => readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'c:4318' })).toThrow(/http\(s\) URL/);
    expect(() => readOtelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_BSP_MAX_QUEUE_SIZE: '0' })).toThrow(/OTEL_BSP_MAX_QUEUE_SIZE/);
  });

  test('parseKeyValues skips malformed pairs', () => {
    expect(parseKeyValues('a=1,,=x,b')).toEqual({ a: '1' });
  });
});
