/**
 * An attacker who may write a workspace's agent integrations (a workspace manager) points its agent card URL at a
 * server that answers an endless card, hoping every GET of the agent card makes the gateway hold it whole (memory
 * exhaustion). The card is refused once it passes 1 MiB: the gateway stops reading there.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { useAgentStack } from '../agents/support.ts';
import { endlessJson } from './endless-json.ts';

const TOTAL = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;

describe('an oversized agent card [sqlite]', () => {
  const get = useAgentStack('sqlite');
  let server: ReturnType<typeof Bun.serve>;
  /** Every GET's card: what the gateway read of them all is the sum of their pulled(). */
  const cards: ReturnType<typeof endlessJson>[] = [];
  const served = () => cards.reduce((sum, c) => sum + c.pulled(), 0);
  beforeAll(() => {
    server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => {
        const card = endlessJson('{"name":"', TOTAL, CHUNK);
        cards.push(card);
        return new Response(card.body, { headers: { 'content-type': 'application/json' } });
      },
    });
  });
  afterAll(() => server?.stop(true));

  test('is refused after about 1 MiB, not read to its end', async () => {
    const s = get();
    const made = await s.admin<{ id: string }>('POST', '/agent-integrations', {
      name: 'Endless card',
      workspace_id: s.defaultWorkspace,
      url: s.upstream.url,
      agent_card_url: `http://127.0.0.1:${server.port}/card.json`,
      auth: { type: 'none' },
    });
    expect(made.status).toBe(201);
    const agent = await s.admin<{ id: string }>('POST', '/agent-servers', { name: 'Endless card', agent_integration_id: made.body.id });
    expect(agent.status).toBe(201);
    const card = await s.admin<{ error: { message: string } }>('GET', `/agent-servers/${agent.body.id}/agent-card`);
    expect(card.status).toBe(502);
    expect(card.body.error.message).toContain('larger than 1 MiB');
    // Socket buffers may take a few MiB more than the gateway read; far from the whole 64 MiB.
    expect(served()).toBeLessThan(TOTAL / 4);
  }, 30_000);
});
