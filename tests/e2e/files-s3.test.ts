// Gateway-kept files in an S3-compatible bucket (FILES_S3_*): uploads, contents, a batch's input and output files and
// deletes go to the bucket, SigV4-signed (the local object store checks every signature); nothing is written to
// FILES_DIR. A wrong secret: the upload fails and no file object is left.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useStack } from '../helpers/e2e-stack.ts';
import { startS3Mock } from '../mocks/s3-server.ts';
import { chatLines, jsonl, statusOf, uploadBatchFile, waitForBatch } from './batches-helpers.ts';

const S3 = { bucket: 'gateway-files', region: 'eu-west-1', accessKeyId: 'AKIAS3TEST0001', secretAccessKey: 's3/test+secret' };
const s3 = startS3Mock(S3);
const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-files-s3-'));
afterAll(async () => {
  await s3.stop();
  rmSync(FILES_DIR, { recursive: true, force: true });
});
const env = (secret: string) => ({
  FILES_DIR,
  FILES_S3_ENDPOINT: s3.url,
  FILES_S3_BUCKET: S3.bucket,
  FILES_S3_REGION: S3.region,
  FILES_S3_ACCESS_KEY_ID: S3.accessKeyId,
  FILES_S3_SECRET_ACCESS_KEY: secret,
  FILES_S3_PREFIX: 'gw/',
  BATCH_POLL_INTERVAL_MS: '200',
});

describe('files in an S3-compatible bucket', () => {
  const stack = useStack('sqlite', { env: env(S3.secretAccessKey) });

  test('upload, content, a batch with its output file, delete: every byte in the bucket, none in FILES_DIR', async () => {
    const { client } = stack();
    const gw = client({ 'x-gateway-provider': 'vllm' });
    const text = chatLines(5);
    const file = await uploadBatchFile(gw, text);
    const key = [...s3.objects.keys()].find((k) => k.endsWith(`/${file.id}`));
    expect(key).toMatch(new RegExp(`^${S3.bucket}/gw/[^/]+/${file.id}$`));
    expect(new TextDecoder().decode(s3.objects.get(key!))).toBe(text);
    expect(await (await gw.files.content(file.id)).text()).toBe(text);

    const batch = await gw.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await waitForBatch(gw, batch.id);
    expect(done.status).toBe('completed');
    expect(jsonl(await (await gw.files.content(done.output_file_id!)).text())).toHaveLength(5);
    expect([...s3.objects.keys()].some((k) => k.endsWith(`/${done.output_file_id}`))).toBe(true);

    await gw.files.delete(file.id);
    expect(s3.objects.has(key!)).toBe(false);
    expect(readdirSync(FILES_DIR)).toEqual([]);
    expect(s3.requests.every((r) => r.headers.authorization?.startsWith('AWS4-HMAC-SHA256 Credential=AKIAS3TEST0001/'))).toBe(true);
  });
});

describe('files in an S3-compatible bucket, with a secret the bucket refuses', () => {
  const stack = useStack('sqlite', { env: env('a-wrong-secret') });

  test('the upload fails (the bucket said 403) and leaves no file object', async () => {
    const { client } = stack();
    const gw = client({ 'x-gateway-provider': 'vllm' });
    expect(await statusOf(uploadBatchFile(gw, chatLines(1)))).toBe(500);
    expect((await gw.files.list()).data).toEqual([]);
  });
});
