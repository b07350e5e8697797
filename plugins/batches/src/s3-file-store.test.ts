// FILES_S3_*: none without a bucket; with one, the endpoint and credentials are required (the start stops naming the
// missing one), the region defaults to us-east-1. The bucket itself: tests/e2e/files-s3.test.ts.
import { describe, expect, test } from 'bun:test';
import { s3SettingsFromEnv } from './s3-file-store.ts';

const full = { FILES_S3_BUCKET: 'b', FILES_S3_ENDPOINT: 'http://127.0.0.1:9000/', FILES_S3_ACCESS_KEY_ID: 'AK', FILES_S3_SECRET_ACCESS_KEY: 'SK' };

describe('S3 file storage settings', () => {
  test('no bucket: the local directory', () => {
    expect(s3SettingsFromEnv({ FILES_S3_ENDPOINT: 'http://x' })).toBeUndefined();
  });

  test('a bucket: endpoint without its trailing slash, region us-east-1, no prefix', () => {
    expect(s3SettingsFromEnv(full)).toEqual({ endpoint: 'http://127.0.0.1:9000', bucket: 'b', region: 'us-east-1', accessKeyId: 'AK', secretAccessKey: 'SK', prefix: '' });
  });

  test('a missing endpoint or credential, or an endpoint that is no URL, is named', () => {
    for (const name of ['FILES_S3_ENDPOINT', 'FILES_S3_ACCESS_KEY_ID', 'FILES_S3_SECRET_ACCESS_KEY'] as const)
      expect(() => s3SettingsFromEnv({ ...full, [name]: '' })).toThrow(name);
    expect(() => s3SettingsFromEnv({ ...full, FILES_S3_ENDPOINT: 'minio:9000' })).toThrow('FILES_S3_ENDPOINT');
  });
});
