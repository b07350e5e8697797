// End to end: any other /v1 path goes to the provider unchanged (method, path, query, body) and its answer comes
// back unchanged (status, content type, bytes, encoding, streams). Client headers: `x-forwarded-*` and the gateway's
// own never reach the provider; `forward_headers` (config or `x-gateway-forward-headers`) do. SQLite and MariaDB.

import { beforeEach, describe, expect, test } from 'bun:test';
import { toFile } from 'openai';
import type { RecordedRequest } from '../mocks/openai-server.ts';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { useStack } from '../helpers/e2e-stack.ts';

const T = 20_000;

/** Every byte value, twice, plus invalid UTF-8: a body that any text decoding would damage. */
const BINARY = new Uint8Array([...Array.from({ length: 512 }, (_, i) => i % 256), 0xff, 0xfe, 0xc3, 0x28, 0x00]);

const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer());

function expectNoGatewayOrProxyHeaders(rec: RecordedRequest, gatewayKey: string): void {
  const names = Object.keys(rec.headers);
  expect(names.filter((n) => n.startsWith('x-gateway-'))).toEqual([]);
  expect(names.filter((n) => n.startsWith('x-forwarded-'))).toEqual([]);
  expect(JSON.stringify(rec.headers)).not.toContain(gatewayKey);
}

describe.each(E2E_DIALECTS)('passthrough (%s)', (dialect) => {
  const stack = useStack(dialect);
  beforeEach(() => stack().mock.reset());

  // ---------------------------------------------------------------------------------------------- SDK: files
  test('files through the SDK: multipart upload, list, retrieve, binary content, delete', async () => {
    const { mock, client, providerKey } = stack();
    const c = client();
    const created = await c.files.create({ file: await toFile(BINARY, 'data.bin', { type: 'application/octet-stream' }), purpose: 'assistants' });
    expect(created.object).toBe('file');
    expect(created.filename).toBe('data.bin');
    expect(created.bytes).toBe(BINARY.byteLength);
    expect(created.purpose).toBe('assistants');
    const upload = mock.requests[0]!;
    expect(upload.method).toBe('POST');
    expect(upload.path).toBe('/v1/files');
    expect(upload.headers['content-type']).toStartWith('multipart/form-data; boundary=');
    expect(upload.headers.authorization).toBe(`Bearer ${providerKey}`);

    const list = await c.files.list();
    expect(list.data.map((f) => f.id)).toEqual([created.id]);
    expect(mock.requests[1]!).toMatchObject({ method: 'GET', path: '/v1/files' });

    expect((await c.files.retrieve(created.id)).id).toBe(created.id);
    const content = await c.files.content(created.id);
    expect(content.headers.get('content-type')).toBe('application/octet-stream');
    expect(await bytesOf(content)).toEqual(BINARY); // the multipart bytes went up and came back unchanged

    const deleted = await c.files.delete(created.id);
    expect(deleted).toMatchObject({ id: created.id, deleted: true });
    expect(mock.requests.at(-1)!).toMatchObject({ method: 'DELETE', path: `/v1/files/${created.id}`, search: '' });
  }, T);

  // ---------------------------------------------------------------------------------------------- methods, path, query, body
  test('GET, POST, PUT and DELETE keep method, path, query and body; status, content type and bytes come back', async () => {
    const { mock, gw, headers } = stack();
    const answers: Record<string, { status: number; body: string; type: string }> = {
      GET: { status: 200, body: '{"id":"asst_1","object":"assistant","name":"e2e"}', type: 'application/json' },
      POST: { status: 201, body: '{\n  "id": "asst_1",\n  "created": true\n}', type: 'application/json; charset=utf-8' },
      PUT: { status: 202, body: 'accepted, plain text', type: 'text/plain; charset=utf-8' },
      DELETE: { status: 200, body: '{"id":"asst_1","deleted":true}', type: 'application/json' },
    };
    const bodies: Record<string, string | undefined> = {
      GET: undefined,
      POST: JSON.stringify({ name: 'e2e', tools: [{ type: 'code_interpreter' }], nested: { ü: 'ünïcödé ✓' } }),
      PUT: 'raw text body\nline two',
      DELETE: undefined,
    };
    for (const method of ['GET', 'POST', 'PUT', 'DELETE'] as const) {
      mock.reset();
      mock.setBehavior((req) => {
        const a = answers[req.method]!;
        return { kind: 'respond', status: a.status, body: a.body, headers: { 'content-type': a.type, 'x-provider-thing': `${req.method}-1` } };
      });
      const res = await fetch(`${gw.url}/v1/assistants/asst_1?x=1&y=a%20b&empty=`, {
        method,
        headers: { ...headers(), ...(bodies[method] !== undefined ? { 'content-type': method === 'PUT' ? 'text/plain' : 'application/json' } : {}) },
        body: bodies[method],
      });
      const a = answers[method]!;
      expect(res.status).toBe(a.status);
      expect(res.headers.get('content-type')).toBe(a.type);
      expect(res.headers.get('x-provider-thing')).toBe(`${method}-1`);
      expect(await res.text()).toBe(a.body);
      expect(res.headers.get('x-gateway-trace-id')).toBeString();

      expect(mock.requests).toHaveLength(1);
      const rec = mock.requests[0]!;
      expect(rec.method).toBe(method);
      expect(rec.path).toBe('/v1/assistants/asst_1');
      expect(rec.search).toBe('?x=1&y=a%20b&empty=');
      expect(rec.body).toBe(bodies[method] ?? '');
    }
  }, T);

  test('the provider\'s own error passes through unchanged (status, content type, bytes)', async () => {
    const { mock, gw, headers } = stack();
    const direct = await fetch(`${mock.url}/no/such/thing?q=1`, { method: 'POST', headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, body: '{}' });
    const expected = await direct.text();
    const res = await fetch(`${gw.url}/v1/no/such/thing?q=1`, { method: 'POST', headers: { ...headers(), 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(direct.status);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe(direct.headers.get('content-type'));
    expect(await res.text()).toBe(expected); // pretty-printed by the "provider", four spaces and a newline
    expect(mock.requests.at(-1)!.path).toBe('/v1/no/such/thing');
  }, T);

  test('a binary request body goes up and a binary answer comes back byte for byte', async () => {
    const { mock, gw, headers } = stack();
    const answer = BINARY.slice().reverse();
    mock.setBehavior({ kind: 'respond', status: 200, body: answer, headers: { 'content-type': 'audio/mpeg' } });
    const res = await fetch(`${gw.url}/v1/audio/speech`, { method: 'POST', headers: { ...headers(), 'content-type': 'application/octet-stream' }, body: BINARY });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(await bytesOf(res)).toEqual(answer);
    // The mock records bodies as (lossy) text; the byte count shows nothing was re-encoded on the way up.
    expect(mock.requests[0]!.headers['content-length']).toBe(String(BINARY.byteLength));
    expect(mock.requests[0]!.headers['content-type']).toBe('application/octet-stream');
  }, T);

  test('a gzip-encoded answer comes back still encoded, same bytes, and decodes to the provider\'s JSON', async () => {
    const { mock, gw, headers } = stack();
    const json = JSON.stringify({ object: 'list', data: Array.from({ length: 50 }, (_, i) => ({ id: `item_${i}`, text: 'compress me '.repeat(4) })) });
    const gz = Bun.gzipSync(new TextEncoder().encode(json));
    mock.setBehavior({ kind: 'respond', status: 200, body: gz, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });

    const raw = await fetch(`${gw.url}/v1/vector_stores?limit=50`, { headers: { ...headers(), 'accept-encoding': 'gzip' }, decompress: false } as RequestInit);
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-encoding')).toBe('gzip');
    expect(raw.headers.get('content-type')).toBe('application/json');
    expect(await bytesOf(raw)).toEqual(new Uint8Array(gz));

    const decoded = await fetch(`${gw.url}/v1/vector_stores?limit=50`, { headers: { ...headers(), 'accept-encoding': 'gzip' } });
    expect(await decoded.text()).toBe(json);
    expect(mock.requests[0]!.search).toBe('?limit=50');
  }, T);

  test('a streamed passthrough answer is relayed unchanged and as it arrives', async () => {
    const { mock, gw, headers } = stack();
    const GAP = 150;
    const events = [
      { event: 'thread.run.created', data: { id: 'run_1', object: 'thread.run', status: 'queued' } },
      { event: 'thread.message.delta', data: { id: 'msg_1', delta: { content: [{ index: 0, type: 'text', text: { value: 'Hel' } }] } } },
      { event: 'thread.message.delta', data: { id: 'msg_1', delta: { content: [{ index: 0, type: 'text', text: { value: 'lo' } }] } } },
      { event: 'thread.run.completed', data: { id: 'run_1', object: 'thread.run', status: 'completed' } },
    ];
    mock.setBehavior({ kind: 'stream', frames: events, chunkDelayMs: GAP });
    const expected = `${events.map((e) => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`).join('')}data: [DONE]\n\n`;

    const started = performance.now();
    const res = await fetch(`${gw.url}/v1/threads/thread_1/runs?include=step`, {
      method: 'POST',
      headers: { ...headers(), 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ assistant_id: 'asst_1', stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = res.body!.getReader();
    const arrivals: number[] = [];
    let text = '';
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push(performance.now() - started);
      text += decoder.decode(value, { stream: true });
    }
    expect(text).toBe(expected);
    // The first event reached the client well before the mock wrote the last one (3 gaps later).
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(3 * GAP - 100);
    expect(mock.requests[0]!).toMatchObject({ method: 'POST', path: '/v1/threads/thread_1/runs', search: '?include=step' });
  }, T);

  // ---------------------------------------------------------------------------------------------- request headers
  test('x-forwarded-* and x-gateway-* request headers never reach the provider (passthrough and chat)', async () => {
    const { mock, gw, headers, client, providerKey } = stack();
    const sneaky = {
      'x-forwarded-for': '203.0.113.9',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
      'x-gateway-metadata': JSON.stringify({ user: 'alice' }),
      'x-gateway-trace-id': 'trace-hidden',
      'x-gateway-span-id': 'span-1',
      'x-gateway-cache-namespace': 'ns',
    };
    await fetch(`${gw.url}/v1/models`, { headers: { ...headers(), ...sneaky } });
    await client(sneaky).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    await client(sneaky).files.list();
    expect(mock.requests).toHaveLength(3);
    for (const rec of mock.requests) {
      expectNoGatewayOrProxyHeaders(rec, gw.adminKey);
      expect(rec.headers.authorization).toBe(`Bearer ${providerKey}`);
    }
  }, T);

  test('forward_headers: named headers reach the provider (x-gateway-forward-headers and config), others do not', async () => {
    const { mock, client } = stack();
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }] };
    const custom = { 'x-tenant-id': 'tenant-42', 'x-request-source': 'e2e', 'x-not-listed': 'nope' };

    await client(custom).chat.completions.create(body);
    expect(mock.requests[0]!.headers['x-tenant-id']).toBeUndefined();
    expect(mock.requests[0]!.headers['x-request-source']).toBeUndefined();

    await client({ ...custom, 'x-gateway-forward-headers': 'x-tenant-id, X-Request-Source' }).chat.completions.create(body);
    const viaHeader = mock.requests[1]!;
    expect(viaHeader.headers['x-tenant-id']).toBe('tenant-42');
    expect(viaHeader.headers['x-request-source']).toBe('e2e');
    expect(viaHeader.headers['x-not-listed']).toBeUndefined();
    expectNoGatewayOrProxyHeaders(viaHeader, stack().gw.adminKey);

    const config = { provider: 'openai', api_key: 'sk-fwd', custom_host: mock.url, forward_headers: ['x-tenant-id'] };
    await client({ ...custom, 'x-gateway-config': JSON.stringify(config), 'x-gateway-provider': null, 'x-gateway-custom-host': null }).embeddings.create({
      model: 'text-embedding-3-small',
      input: 'fwd',
    });
    const viaConfig = mock.requests[2]!;
    expect(viaConfig.path).toBe('/v1/embeddings');
    expect(viaConfig.headers['x-tenant-id']).toBe('tenant-42');
    expect(viaConfig.headers['x-request-source']).toBeUndefined();
    expect(viaConfig.headers.authorization).toBe('Bearer sk-fwd');

    // On a passthrough path too.
    await client({ ...custom, 'x-gateway-config': JSON.stringify(config), 'x-gateway-provider': null, 'x-gateway-custom-host': null }).files.list();
    expect(mock.requests[3]!.headers['x-tenant-id']).toBe('tenant-42');
    expectNoGatewayOrProxyHeaders(mock.requests[3]!, stack().gw.adminKey);
  }, T);
});
