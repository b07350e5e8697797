/**
 * The agent-card sync: a server's upstream card (name, description, version, skills) is read when the server is
 * created, on POST /agent-servers/:id/sync and on the AGENT_CARD_SYNC_INTERVAL_MS schedule, and shown with the sync
 * status in the server's GET. A changed card is seen after a sync; a failing upstream marks the sync failed, saying
 * why, and the last good card stays. The upstream is an @a2a-js/sdk agent.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type A2AUpstream, startA2AUpstream } from '../mocks/a2a-upstream.ts';
import { type AgentStack, UPSTREAM_TOKEN, uniqueSlug, useAgentStack } from './support.ts';

interface ServerView {
  id: string;
  agent_card: { name: string; description: string | null; version: string; skills: { id: string; name: string; description: string | null }[]; source: string } | null;
  sync_status: string;
  sync_error: string | null;
  synced_at: string | null;
}

const upstreams: A2AUpstream[] = [];
afterAll(async () => {
  for (const u of upstreams) await u.close();
});

async function serverAt(s: AgentStack, upstream: A2AUpstream): Promise<ServerView> {
  const integration = await s.admin<{ id: string }>('POST', '/agent-integrations', {
    name: 'Synced',
    slug: uniqueSlug('synced'),
    workspace_id: s.defaultWorkspace,
    url: upstream.url,
    auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
  });
  expect(integration.status).toBe(201);
  const server = await s.admin<ServerView>('POST', '/agent-servers', { name: 'Synced', slug: uniqueSlug('synced'), agent_integration_id: integration.body.id });
  expect(server.status).toBe(201);
  return server.body;
}

const SKILLS_V2 = [{ id: 'summarise', name: 'Summarise', description: 'Makes it short', tags: [], examples: [], inputModes: [], outputModes: [] }];

for (const dialect of E2E_DIALECTS) {
  describe(`agent card sync [${dialect}]`, () => {
    const get = useAgentStack(dialect);

    test('read on create; a changed card is seen after a sync; a failing upstream marks it failed and keeps the last good card', async () => {
      const s = get();
      const upstream = await startA2AUpstream(UPSTREAM_TOKEN);
      upstreams.push(upstream);
      const created = await serverAt(s, upstream);
      expect(created.sync_status).toBe('synced');
      expect(created.agent_card).toEqual({
        name: 'Echo agent',
        description: 'Echoes words back, one artifact per word',
        version: '1.2.3',
        skills: [
          { id: 'echo', name: 'Echo', description: 'Echoes words' },
          { id: 'wait', name: 'Wait', description: 'Waits until cancelled' },
        ],
        source: `${upstream.origin}/.well-known/agent-card.json`,
      });

      upstream.reviseCard({ name: 'Summary agent', version: '2.0.0', skills: SKILLS_V2 });
      const unchanged = await s.admin<ServerView>('GET', `/agent-servers/${created.id}`);
      expect(unchanged.body.agent_card?.version).toBe('1.2.3');
      const synced = await s.admin<ServerView>('POST', `/agent-servers/${created.id}/sync`);
      expect(synced.status).toBe(200);
      const seen = await s.admin<ServerView>('GET', `/agent-servers/${created.id}`);
      expect(seen.body).toMatchObject({ sync_status: 'synced', sync_error: null, agent_card: { name: 'Summary agent', version: '2.0.0', skills: [{ id: 'summarise', name: 'Summarise', description: 'Makes it short' }] } });

      upstream.failCards(503);
      await s.admin('POST', `/agent-servers/${created.id}/sync`);
      const failed = await s.admin<ServerView>('GET', `/agent-servers/${created.id}`);
      expect(failed.body.sync_status).toBe('failed');
      expect(failed.body.sync_error).toContain('503');
      expect(failed.body.agent_card).toMatchObject({ name: 'Summary agent', version: '2.0.0' });
      // The list shows the same.
      const listed = await s.admin<{ data: ServerView[] }>('GET', '/agent-servers?page_size=100');
      expect(listed.body.data.find((v) => v.id === created.id)).toMatchObject({ sync_status: 'failed', agent_card: { version: '2.0.0' } });
    });
  });
}

describe('agent card sync on its schedule [sqlite]', () => {
  const get = useAgentStack('sqlite', { AGENT_CARD_SYNC_INTERVAL_MS: '300' });

  /** Polls until the server's card says `version` (the schedule runs in the background); a hang guard, not a timing check. */
  async function waitForVersion(s: AgentStack, id: string, version: string): Promise<ServerView> {
    for (let i = 0; i < 300; i++) {
      const server = await s.admin<ServerView>('GET', `/agent-servers/${id}`);
      if (server.body.agent_card?.version === version) return server.body;
      await Bun.sleep(100);
    }
    throw new Error(`the card never reached version ${version}`);
  }

  test('the schedule reads the changed card without any call to the server', async () => {
    const s = get();
    const upstream = await startA2AUpstream(UPSTREAM_TOKEN);
    upstreams.push(upstream);
    const created = await serverAt(s, upstream);
    expect(created.agent_card?.version).toBe('1.2.3');
    upstream.reviseCard({ version: '3.0.0', description: 'Revised' });
    const seen = await waitForVersion(s, created.id, '3.0.0');
    expect(seen).toMatchObject({ sync_status: 'synced', agent_card: { description: 'Revised' } });
  }, 60_000);
});
