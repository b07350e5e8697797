/**
 * An attacker with a workspace key uploads a file far over FILES_MAX_BYTES, hoping the gateway buffers the whole
 * multipart body before checking its size (memory exhaustion). A declared Content-Length over the limit is refused
 * before any byte is read; a chunked body is refused once it passes the limit, having read at most one chunk more.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useStack, workspaceWithKey } from '../stored-access/support.ts';

const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-files-limit-'));
afterAll(() => rmSync(FILES_DIR, { recursive: true, force: true }));

const LIMIT = 64 * 1024;
const CHUNK = 16 * 1024;
const TOTAL = 8 * 1024 * 1024;
const BOUNDARY = 'gw-limit-boundary';

/** A multipart upload of TOTAL bytes, produced on demand; `pulled()` says how many bytes the reader asked for. */
function hugeUpload(): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  const head = new TextEncoder().encode(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n\r\n`,
  );
  let sent = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (sent >= TOTAL) return controller.close();
        const chunk = sent === 0 ? head : new Uint8Array(CHUNK).fill(0x61);
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { body, pulled: () => sent };
}

describe('file upload over FILES_MAX_BYTES [sqlite]', () => {
  const stack = useStack('sqlite', { FILES_DIR, FILES_MAX_BYTES: String(LIMIT) });

  const post = async (key: string, body: ReadableStream<Uint8Array>, extra: Record<string, string> = {}) => {
    const s = stack();
    const res = await s.gw.handle(
      new Request('http://gateway/v1/files', {
        method: 'POST',
        headers: {
          'x-gateway-api-key': key,
          'x-gateway-provider': 'vllm',
          'x-gateway-custom-host': s.mock.url,
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          ...extra,
        },
        body,
        duplex: 'half',
      } as RequestInit),
    );
    return { status: res.status, json: (await res.json()) as { error?: { code?: string } } };
  };

  test('a chunked body is refused as soon as it passes the limit, not after reading it all', async () => {
    const s = stack();
    const { key } = await workspaceWithKey(s, ['completions.write']);
    const upload = hugeUpload();
    const res = await post(key, upload.body);
    expect(res.status).toBe(413);
    expect(upload.pulled()).toBeLessThanOrEqual(LIMIT + 2 * CHUNK);
    expect(readdirSync(FILES_DIR, { recursive: true }).length).toBe(0);
  });

  test('a declared Content-Length over the limit is refused before the body is read', async () => {
    const s = stack();
    const { key } = await workspaceWithKey(s, ['completions.write']);
    const upload = hugeUpload();
    const res = await post(key, upload.body, { 'content-length': String(TOTAL) });
    expect(res.status).toBe(413);
    expect(upload.pulled()).toBeLessThanOrEqual(CHUNK);
  });
});
