import { expect, test } from 'bun:test';
import { GatewayError, type TargetConfig } from '@gateway/sdk';
import { methodPath, projectOf, publisherOf, resolveModel } from './models.ts';

const target: TargetConfig = { provider: 'vertex-ai', svcC_project_id: 'proj', svcC_region: 'europe-west4' };

test('a bare name or google.<name> is a Gemini model under the config’s project and region', () => {
  expect(resolveModel('gemini-2.5-flash', target)).toEqual({ publisher: 'google', resource: 'projects/proj/locations/europe-west4/publishers/google/models/gemini-2.5-flash', name: 'gemini-2.5-flash' });
  expect(resolveModel('google.gemini-2.5-pro', target).resource).toBe('projects/proj/locations/europe-west4/publishers/google/models/gemini-2.5-pro');
});

test('anthropic.<model>[@<version>] selects the Anthropic publisher', () => {
  expect(resolveModel('anthropic.claude-sonnet-4-5@20250929', target)).toEqual({
    publisher: 'anthropic',
    resource: 'projects/proj/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-5@20250929',
    name: 'claude-sonnet-4-5@20250929',
  });
  expect(resolveModel('anthropic.claude-haiku-4-5', target).name).toBe('claude-haiku-4-5');
});

test('a complete resource identifier is used as the path as it is', () => {
  const full = 'projects/other/locations/us-east5/publishers/anthropic/models/claude-opus-4@20250514';
  expect(resolveModel(full, target)).toEqual({ publisher: 'anthropic', resource: full, name: 'claude-opus-4@20250514' });
  const endpoint = 'projects/123/locations/us-central1/endpoints/456';
  expect(resolveModel(endpoint, target)).toEqual({ publisher: 'google', resource: endpoint, name: '456' });
  expect(methodPath(resolveModel(full, target), 'rawPredict')).toBe(`/v1/${full}:rawPredict`);
  // the identifier needs no project in the config
  expect(resolveModel(full, { provider: 'vertex-ai' }).resource).toBe(full);
});

test('publishers/… and endpoints/… go under the config’s project and region', () => {
  expect(resolveModel('publishers/google/models/gemini-2.0-flash', target).resource).toBe('projects/proj/locations/europe-west4/publishers/google/models/gemini-2.0-flash');
  expect(resolveModel('endpoints/789', target).resource).toBe('projects/proj/locations/europe-west4/endpoints/789');
});

test('the project falls back to the service account’s; the region to us-central1', () => {
  const t: TargetConfig = { provider: 'vertex-ai', svcC_service_account_json: { project_id: 'from-sa' } };
  expect(projectOf(t)).toBe('from-sa');
  expect(resolveModel('gemini-2.5-flash', t).resource).toBe('projects/from-sa/locations/us-central1/publishers/google/models/gemini-2.5-flash');
  expect(() => resolveModel('gemini-2.5-flash', { provider: 'vertex-ai' })).toThrow('needs a project');
});

test('bad names are 400s', () => {
  for (const bad of ['projects/p/locations/l/other/x', 'publishers/google/x', 'endpoints/a/b', 'a/b', '../x', 'anthropic.', 'gemini:predict']) {
    let error: unknown;
    try {
      resolveModel(bad, target);
    } catch (e) {
      error = e;
    }
    expect(error instanceof GatewayError && error.status === 400).toBe(true);
  }
  expect(() => resolveModel('gemini', { ...target, svcC_project_id: 'p/../q' })).toThrow(GatewayError);
});

test('publisherOf works from the model string alone', () => {
  expect(publisherOf('anthropic.claude-sonnet-4-5')).toBe('anthropic');
  expect(publisherOf('projects/p/locations/l/publishers/anthropic/models/claude')).toBe('anthropic');
  expect(publisherOf('publishers/meta/models/llama')).toBe('meta');
  expect(publisherOf('gemini-2.5-flash')).toBe('google');
  expect(publisherOf(undefined)).toBe('google');
});
