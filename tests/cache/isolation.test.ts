// Tenants never see each other's answers: two API keys in two workspaces of the same gateway (the second workspace
// and its workspace-service key are written straight into the gateway's SQLite database: addWorkspaceKey), the same config, the same provider key,
// the same body, the same namespace. Simple and semantic mode, whole and streamed.

import { beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import type OpenAI from 'openai';
import { useStack } from '../helpers/e2e-stack.ts';
import { addWorkspaceKey, chat, RUN, SEMANTIC, SIMPLE, streamChat, T, unique, upstream, userChat } from './support.ts';

const stack = useStack('sqlite');
const secondKey = `gw-cache-ws2-${crypto.randomUUID()}`;
/** Another key of the FIRST workspace: keys of one workspace share its cache. */
const sameWorkspaceKey = `gw-cache-ws1-${crypto.randomUUID()}`;
let secondWorkspace = '';

beforeAll(async () => {
  secondWorkspace = (await addWorkspaceKey(stack().db.url, secondKey, 'new')).workspaceId;
  await addWorkspaceKey(stack().db.url, sameWorkspaceKey, 'first');
});
beforeEach(() => stack().mock.reset());

/** A client of the second workspace: same provider headers, another gateway key. */
function second(): OpenAI {
  return stack().client({ 'x-gateway-api-key': secondKey });
}

describe('workspaces', () => {
  test('keys of one workspace share its cache; the second key authenticates', async () => {
    const { client, mock } = stack();
    const answer = await chat(second(), userChat(unique('hello from workspace two')), {});
    expect(answer.status).toBe('DISABLED');
    expect(secondWorkspace).not.toBe('');
    const body = userChat(unique('One workspace, two keys'));
    const a = await chat(client(), body, SIMPLE);
    const b = await chat(client({ 'x-gateway-api-key': sameWorkspaceKey }), body, SIMPLE);
    expect([a.status, b.status]).toEqual(['MISS', 'HIT']);
    expect(b.data.id).toBe(a.data.id);
    expect(upstream(mock)).toBe(2);
  }, T);

  test('simple mode: an answer stored for one workspace is a miss for the other', async () => {
    const { client, mock } = stack();
    const body = userChat(unique('Shared question'));
    const ns = { ...SIMPLE, 'x-gateway-cache-namespace': `${RUN}-shared` };
    const a = await chat(client(), body, ns);
    expect(a.status).toBe('MISS');
    expect((await chat(client(), body, ns)).status).toBe('HIT');
    const b = await chat(second(), body, ns);
    expect(b.status).toBe('MISS');
    expect(b.data.id).not.toBe(a.data.id);
    expect((await chat(second(), body, ns)).data.id).toBe(b.data.id);
    expect(upstream(mock)).toBe(2);
    // streams too
    const streamed = userChat(unique('Shared streamed question'));
    expect((await streamChat(client(), streamed, ns)).status).toBe('MISS');
    expect((await streamChat(second(), streamed, ns)).status).toBe('MISS');
    expect((await streamChat(second(), streamed, ns)).status).toBe('HIT');
    expect(upstream(mock)).toBe(4);
  }, T);

  test('semantic mode: however similar, never across workspaces', async () => {
    const { client, mock } = stack();
    const ns = { ...SEMANTIC, 'x-gateway-cache-namespace': `${RUN}-semantic-shared` };
    expect((await chat(client(), userChat('What is the tallest building in Dubai?'), ns)).status).toBe('SEMANTIC_MISS');
    expect((await chat(client(), userChat('what is the tallest building in dubai'), ns)).status).toBe('SEMANTIC_HIT');
    expect((await chat(second(), userChat('What is the tallest building in Dubai?'), ns)).status).toBe('SEMANTIC_MISS');
    expect((await chat(second(), userChat('what is the tallest building in Dubai'), ns)).status).toBe('SEMANTIC_HIT');
    expect(upstream(mock)).toBe(2);
  }, T);
});
