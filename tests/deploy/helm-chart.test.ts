// The Helm chart (deploy/helm). No Helm renderer is available here: Helm is a Go program, no npm package ships it,
// and there is no Go toolchain on the test machines. So the templates are not rendered; this test checks what can be
// checked without rendering: the chart's YAML files parse, every `.Values.*` a template reads exists in values.yaml
// (a typo would render as empty), the probes name the gateway's health routes, the grace period outlasts the drain,
// and every environment variable the chart sets is one the gateway reads.

import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/gateway-process.ts';

const CHART = join(ROOT, 'deploy/helm');
const read = (path: string) => readFileSync(join(CHART, path), 'utf8');
const templates = readdirSync(join(CHART, 'templates')).map((name) => ({ name, text: read(`templates/${name}`) }));
const values = Bun.YAML.parse(read('values.yaml')) as Record<string, unknown>;

function has(object: unknown, path: string[]): boolean {
  let at = object;
  for (const key of path) {
    if (typeof at !== 'object' || at === null || !(key in at)) return false;
    at = (at as Record<string, unknown>)[key];
  }
  return true;
}

describe('deploy/helm', () => {
  test('Chart.yaml and values.yaml parse; the chart has the workloads the operations guide names', () => {
    const chart = Bun.YAML.parse(read('Chart.yaml')) as Record<string, unknown>;
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'ai-gateway', type: 'application' });
    const kinds = templates.flatMap((t) => [...t.text.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1]));
    expect(kinds.sort()).toEqual(['Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Secret', 'Service']);
  });

  test('every .Values path a template reads is in values.yaml', () => {
    const missing: string[] = [];
    for (const { name, text } of templates)
      for (const m of text.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
        const path = (m[1] as string).slice(1).split('.');
        if (!has(values, path)) missing.push(`${name}: .Values.${path.join('.')}`);
      }
    expect(missing).toEqual([]);
  });

  test('readiness on /health/ready, liveness on /health/live, the drain shorter than the grace period', () => {
    const deployment = templates.find((t) => t.name === 'deployment.yaml')?.text ?? '';
    expect(deployment).toMatch(/readinessProbe:\n\s+httpGet: \{ path: \/health\/ready, port: http \}/);
    expect(deployment).toMatch(/livenessProbe:\n\s+httpGet: \{ path: \/health\/live, port: http \}/);
    expect(deployment).toContain('terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}');
    expect(deployment).toContain('GATEWAY_DRAIN_TIMEOUT_MS, value: {{ .Values.drainTimeoutMs | quote }}');
    // The template refuses a grace period that does not outlast the drain and the log flush; the defaults pass it.
    expect(deployment).toContain('{{- if le (int .Values.terminationGracePeriodSeconds) (add (div (int .Values.drainTimeoutMs) 1000) 6) }}');
    expect(Number(values.terminationGracePeriodSeconds)).toBeGreaterThan(Number(values.drainTimeoutMs) / 1000 + 6);
  });

  test('the secret holds the encryption and admin keys; the database and Redis URLs are values', () => {
    const secret = templates.find((t) => t.name === 'secret.yaml')?.text ?? '';
    for (const key of ['GATEWAY_ENCRYPTION_KEY', 'GATEWAY_ADMIN_API_KEY', 'DATABASE_URL', 'REDIS_URL']) expect(secret).toContain(`${key}:`);
    expect(values).toMatchObject({ databaseUrl: '', redisUrl: '', secrets: { existingSecret: '', encryptionKey: '', adminApiKey: '' } });
  });

  test('every environment variable the chart sets is one the gateway reads', () => {
    const names = new Set<string>();
    for (const { text } of templates) {
      for (const m of text.matchAll(/name: ([A-Z][A-Z0-9_]+)[,\s]/g)) names.add(m[1] as string);
      for (const m of text.matchAll(/^\s+([A-Z][A-Z0-9_]+): \{\{/gm)) names.add(m[1] as string);
    }
    const sources = ['core/server/src/env.ts', 'core/server/src/serve.ts'].map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');
    expect([...names].sort()).toEqual(['DATABASE_URL', 'GATEWAY_ADMIN_API_KEY', 'GATEWAY_DRAIN_TIMEOUT_MS', 'GATEWAY_ENCRYPTION_KEY', 'PORT', 'REDIS_URL']);
    for (const name of names) expect(sources).toContain(`env.${name}`);
  });
});
