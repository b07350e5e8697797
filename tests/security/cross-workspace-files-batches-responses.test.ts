/**
 * An attacker inside the organisation: a workspace-service key of workspace B that learned the ids of workspace A's
 * gateway-kept files, batches and stored responses. Every read, delete, cancel or reuse of them from B is a 404 (the
 * same answer as an id that does not exist, so B learns nothing), and A still has them afterwards.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Stack, useStack, workspaceWithKey } from '../stored-access/support.ts';

const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-xws-files-'));
afterAll(() => rmSync(FILES_DIR, { recursive: true, force: true }));

const SCOPES = ['completions.write', 'proxy.write'];

interface Raw {
  status: number;
  text: string;
  json: Record<string, unknown>;
}

async function send(s: Stack, key: string, method: string, path: string, body?: string | FormData, headers: Record<string, string> = {}): Promise<Raw> {
  const res = await s.gw.handle(
    new Request(`http://gateway/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, 'x-gateway-provider': 'vllm', 'x-gateway-custom-host': s.mock.url, ...headers },
      body,
    }),
  );
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {}
  return { status: res.status, text, json };
}

function upload(s: Stack, key: string, text: string): Promise<Raw> {
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new File([text], 'input.jsonl'));
  return send(s, key, 'POST', '/files', form);
}

const LINE = `${JSON.stringify({ custom_id: 'a-1', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'secret of A' }] } })}\n`;

describe('cross-workspace access to files, batches and stored responses [sqlite]', () => {
  const stack = useStack('sqlite', { FILES_DIR, BATCH_POLL_INTERVAL_MS: '100' });

  test("B cannot retrieve, read, list or delete A's file, nor start a batch on it", async () => {
    const s = stack();
    const a = await workspaceWithKey(s, SCOPES);
    const b = await workspaceWithKey(s, SCOPES);
    const file = await upload(s, a.key, LINE);
    expect(file.status).toBe(200);
    const id = String(file.json.id);

    expect((await send(s, b.key, 'GET', `/files/${id}`)).status).toBe(404);
    const content = await send(s, b.key, 'GET', `/files/${id}/content`);
    expect(content.status).toBe(404);
    expect(content.text).not.toContain('secret of A');
    const listed = await send(s, b.key, 'GET', '/files');
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(id);
    expect((await send(s, b.key, 'DELETE', `/files/${id}`)).status).toBe(404);
    const batch = await send(s, b.key, 'POST', '/batches', JSON.stringify({ input_file_id: id, endpoint: '/v1/chat/completions', completion_window: '24h' }), {
      'content-type': 'application/json',
    });
    expect(batch.status).toBe(400);
    expect(batch.text).not.toContain('secret of A');

    // A still has it, whole.
    expect((await send(s, a.key, 'GET', `/files/${id}/content`)).text).toBe(LINE);
  });

  test("B cannot retrieve, list or cancel A's batch, nor read its output file", async () => {
    const s = stack();
    const a = await workspaceWithKey(s, SCOPES);
    const b = await workspaceWithKey(s, SCOPES);
    const file = await upload(s, a.key, LINE);
    const created = await send(s, a.key, 'POST', '/batches', JSON.stringify({ input_file_id: file.json.id, endpoint: '/v1/chat/completions', completion_window: '24h' }), {
      'content-type': 'application/json',
    });
    expect(created.status).toBe(200);
    const id = String(created.json.id);
    let done = created;
    const deadline = Date.now() + 30_000;
    while (done.json.status !== 'completed' && Date.now() < deadline) {
      await Bun.sleep(50);
      done = await send(s, a.key, 'GET', `/batches/${id}`);
    }
    expect(done.json.status).toBe('completed');
    const output = String(done.json.output_file_id);

    expect((await send(s, b.key, 'GET', `/batches/${id}`)).status).toBe(404);
    expect((await send(s, b.key, 'POST', `/batches/${id}/cancel`)).status).toBe(404);
    expect((await send(s, b.key, 'GET', '/batches')).text).not.toContain(id);
    const content = await send(s, b.key, 'GET', `/files/${output}/content`);
    expect(content.status).toBe(404);
    expect(content.text).not.toContain('secret of A');
    expect((await send(s, a.key, 'GET', `/files/${output}/content`)).text).toContain('a-1');
  });

  test("B cannot GET, list input_items of, or DELETE A's stored response", async () => {
    const s = stack();
    const a = await workspaceWithKey(s, SCOPES);
    const b = await workspaceWithKey(s, SCOPES);
    // Translated (vllm speaks chat completions): the gateway keeps the Response, no provider copy to fall through to.
    const made = await send(s, a.key, 'POST', '/responses', JSON.stringify({ model: 'gpt-4o-mini', input: 'secret of A' }), {
      'content-type': 'application/json',
      'x-gateway-provider': 'deepseek',
    });
    expect(made.status).toBe(200);
    const id = String(made.json.id);
    // Without a provider the stored routes answer only from the store: 404 for another workspace's id.
    const bare = { 'x-gateway-provider': '', 'x-gateway-custom-host': '' };
    for (const headers of [bare, { 'x-gateway-provider': 'deepseek' }]) {
      const got = await send(s, b.key, 'GET', `/responses/${id}`, undefined, headers);
      expect(got.text).not.toContain('secret of A');
      expect(got.status).not.toBe(200);
      const items = await send(s, b.key, 'GET', `/responses/${id}/input_items`, undefined, headers);
      expect(items.text).not.toContain('secret of A');
      expect(items.status).not.toBe(200);
      const del = await send(s, b.key, 'DELETE', `/responses/${id}`, undefined, headers);
      expect(del.json.deleted).not.toBe(true);
    }
    const mine = await send(s, a.key, 'GET', `/responses/${id}/input_items`, undefined, { 'x-gateway-provider': 'deepseek' });
    expect(mine.status).toBe(200);
    expect(mine.text).toContain('secret of A');
  });
});
