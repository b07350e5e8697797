// Key rotation end to end on SQLite and MariaDB: manual rotation over HTTP, the scheduled lifecycle lived through
// with the plugin's clock (create with a policy → due → rotated → both secrets valid in the transition → the old
// one refused after), the e-mails it sends over SMTP to a local server, and two processes ticking at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { apiKeys } from '@gateway/admin-api-keys';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { eq } from '@gateway/sdk';
import { startSmtpServer, type SmtpMock } from '../mocks/smtp-server.ts';
import { addUser, authenticates, type Json, type KeysGateway, startKeysGateway } from './api-keys-support.ts';

const MINUTE = 60_000;
/** Hang guard for a test or setup that starts gateways on a fresh database (CI is a loaded 2-core machine). */
const SETUP_TIMEOUT_MS = 30_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

interface Key extends Json {
  id: string;
  key?: string;
}

for (const dialect of DIALECTS) {
  describe(`API key rotation [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    let smtp: SmtpMock;
    let k: KeysGateway;
    let memberId: string;

    beforeAll(async () => {
      smtp = await startSmtpServer({ user: 'mailer', pass: 'mail-secret' });
      k = await startKeysGateway(t.url, { ...smtp.env, API_KEY_PREFIX: 'rot-' });
      await addUser(k.database, k.organisationId, 'owner@example.test', 'owner');
      await addUser(k.database, k.organisationId, 'admin@example.test', 'admin');
      memberId = await addUser(k.database, k.organisationId, 'member@example.test', 'member', [{ workspaceId: k.workspaceId, role: 'member' }]);
    }, SETUP_TIMEOUT_MS);
    afterAll(async () => {
      await k?.close();
      await smtp?.close();
    });

    const create = (body: Json, key?: string) => k.call<Key>('POST', '/api-keys', body, key);
    const mailsTo = (address: string, subject: string) => smtp.messages.filter((m) => m.to.includes(address) && m.subject.includes(subject));

    test('manual rotation: a new secret once; both work during the transition; the old one is refused after', async () => {
      const made = await create({ name: 'manual', type: 'workspace-service', workspace_id: k.workspaceId, scopes: ['api_keys.read'] });
      const old = made.body.key ?? '';
      const rotated = await k.call<Key>('POST', `/api-keys/${made.body.id}/rotate`, { key_transition_period_ms: 30 * MINUTE });
      expect(rotated.status).toBe(200);
      const secret = rotated.body.key ?? '';
      expect(secret).toMatch(/^rot-/);
      expect(secret).not.toBe(old);
      const now = k.clock.now();
      expect(Math.abs(Date.parse(String(rotated.body.key_transition_expires_at)) - (now + 30 * MINUTE))).toBeLessThan(MINUTE);
      expect(rotated.body).toMatchObject({ id: made.body.id, rotation_policy: null, next_rotation_at: null, pending_secret: false });
      expect(typeof rotated.body.last_rotated_at).toBe('string');
      expect(await authenticates(k, old)).toBe(true);
      expect(await authenticates(k, secret)).toBe(true);

      // The key's owners hear of it; the e-mail carries no secret.
      const mail = await smtp.waitFor((m) => m.subject.includes('"manual" was rotated'));
      expect(mail.to.sort()).toEqual(['admin@example.test', 'owner@example.test']);
      expect(mail.user).toBe('mailer');
      expect(mail.from).toBe('gateway@example.test');
      expect(mail.text).not.toContain(secret);
      expect(mail.text).not.toContain(old);

      k.clock.advance(30 * MINUTE);
      expect(await authenticates(k, old)).toBe(false);
      expect(await authenticates(k, secret)).toBe(true);

      // Without a body: the default transition (1 h); a second rotation ends the first previous secret at once.
      const again = await k.call<Key>('POST', `/api-keys/${made.body.id}/rotate`);
      expect(again.status).toBe(200);
      expect(Date.parse(String(again.body.key_transition_expires_at)) - k.clock.now()).toBeGreaterThan(HOUR - MINUTE);
      const third = await k.call<Key>('POST', `/api-keys/${made.body.id}/rotate`, {});
      expect(await authenticates(k, secret)).toBe(false);
      expect(await authenticates(k, again.body.key ?? '')).toBe(true);
      expect(await authenticates(k, third.body.key ?? '')).toBe(true);
    });

    test('.rotate scopes govern who rotates which key type; a user rotates its own key', async () => {
      const orgKey = await create({ name: 'org', type: 'organisation-service', scopes: ['api_keys.read'] });
      const wsKey = await create({ name: 'ws', type: 'workspace-service', workspace_id: k.workspaceId, scopes: ['api_keys.read'] });
      const rotator = (await create({ name: 'rotator', type: 'organisation-service', scopes: ['workspace_service_api_keys.rotate'] })).body.key ?? '';
      expect((await k.call('POST', `/api-keys/${wsKey.body.id}/rotate`, {}, rotator)).status).toBe(200);
      const refused = await k.call<{ error: Json }>('POST', `/api-keys/${orgKey.body.id}/rotate`, {}, rotator);
      expect(refused.status).toBe(403);
      expect(String(refused.body.error.message)).toContain('organisation_service_api_keys.rotate');
      const reader = (await create({ name: 'reader', type: 'organisation-service', scopes: ['api_keys.read'] })).body.key ?? '';
      expect((await k.call('POST', `/api-keys/${wsKey.body.id}/rotate`, {}, reader)).status).toBe(403);
      const general = (await create({ name: 'general', type: 'organisation-service', scopes: ['api_keys.rotate'] })).body.key ?? '';
      expect((await k.call('POST', `/api-keys/${orgKey.body.id}/rotate`, {}, general)).status).toBe(200);

      const own = await create({ name: 'own', type: 'workspace-user', workspace_id: k.workspaceId, user_id: memberId, scopes: ['workspace_user_api_keys.rotate'] });
      const self = await k.call<Key>('POST', `/api-keys/${own.body.id}/rotate`, {}, own.body.key);
      expect(self.status).toBe(200);
      // ... but not someone else's key, nor another type.
      expect((await k.call('POST', `/api-keys/${wsKey.body.id}/rotate`, {}, self.body.key)).status).toBe(404);
      expect((await k.call('POST', `/api-keys/${own.body.id}/rotate`, { key_transition_period_ms: 1_799_999 }, self.body.key)).status).toBe(400);
      const revoked = await create({ name: 'revoked', type: 'workspace-service', workspace_id: k.workspaceId, scopes: ['api_keys.read'] });
      await k.call('PUT', `/api-keys/${revoked.body.id}`, { status: 'revoked' });
      expect((await k.call('POST', `/api-keys/${revoked.body.id}/rotate`, {})).status).toBe(409);
    });

    test('scheduled: announced once, rotated when due, the new secret picked up once, the old one refused after the transition', async () => {
      const made = await create({
        name: 'weekly user key',
        type: 'workspace-user',
        workspace_id: k.workspaceId,
        user_id: memberId,
        scopes: ['api_keys.read', 'workspace_user_api_keys.rotate'],
        rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: HOUR },
      });
      expect(made.status).toBe(201);
      const old = made.body.key ?? '';
      const id = made.body.id;
      const due = Date.parse(String(made.body.next_rotation_at));
      expect(made.body).toMatchObject({ rotation_period_days: 7, rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: HOUR } });
      expect(Math.abs(due - (k.clock.now() + 7 * DAY))).toBeLessThan(MINUTE);

      const mine = (report: { rotated: string[]; upcomingNotices: string[] }) => ({ rotated: report.rotated.includes(id), notified: report.upcomingNotices.includes(id) });
      expect(mine(await k.rotation.tick())).toEqual({ rotated: false, notified: false });

      // A weekly key is announced half a period ahead (the 7-day notice is capped at half the period), once.
      k.clock.set(due - 3 * DAY);
      expect(mine(await k.rotation.tick())).toEqual({ rotated: false, notified: true });
      expect(mine(await k.rotation.tick())).toEqual({ rotated: false, notified: false });
      const notice = await smtp.waitFor((m) => m.subject.includes('"weekly user key" will be rotated'));
      expect(notice.to).toEqual(['member@example.test']);
      expect(notice.text).toContain(new Date(due).toISOString());
      expect(mailsTo('member@example.test', '"weekly user key" will be rotated')).toHaveLength(1);

      k.clock.set(due + MINUTE);
      expect(mine(await k.rotation.tick())).toEqual({ rotated: true, notified: false });
      expect(mine(await k.rotation.tick())).toEqual({ rotated: false, notified: false });
      const done = await smtp.waitFor((m) => m.subject.includes('"weekly user key" was rotated'));
      expect(done.to).toEqual(['member@example.test']);
      expect(done.text).toContain(`/v1/api-keys/${id}/reveal`);
      expect(done.text).not.toContain(old);

      const shown = await k.call<Key>('GET', `/api-keys/${id}`);
      expect(shown.body).toMatchObject({ pending_secret: true, next_rotation_at: new Date(due + 7 * DAY).toISOString() });
      expect(Date.parse(String(shown.body.key_transition_expires_at))).toBe(Date.parse(String(shown.body.last_rotated_at)) + HOUR);

      // The owner picks the new secret up with the old one, once.
      const picked = await k.call<Key>('POST', `/api-keys/${id}/reveal`, undefined, old);
      expect(picked.status).toBe(200);
      const secret = picked.body.key ?? '';
      expect(secret).toMatch(/^rot-/);
      expect(secret).not.toBe(old);
      expect((await k.call('POST', `/api-keys/${id}/reveal`, undefined, old)).status).toBe(404);
      expect((await k.call<Key>('GET', `/api-keys/${id}`)).body.pending_secret).toBe(false);
      expect(JSON.stringify(await k.call('GET', `/api-keys/${id}`))).not.toContain(secret);

      // Both secrets work as the same key during the transition; the old one is refused after it.
      expect(await authenticates(k, old)).toBe(true);
      expect((await k.call<Key>('GET', `/api-keys/${id}`, undefined, secret)).body.id).toBe(id);
      k.clock.advance(HOUR);
      expect(await authenticates(k, old)).toBe(false);
      expect((await k.call('GET', `/api-keys/${id}`, undefined, old)).status).toBe(401);
      expect((await k.call<Key>('GET', `/api-keys/${id}`, undefined, secret)).status).toBe(200);
      await k.rotation.tick(); // clears the spent previous secret
      const row = await k.database.findOne(apiKeys, 'id', id, { fresh: true });
      expect(row).toMatchObject({ previous_hash: null, previous_expires_at: null });
    });

    test('a service key with a policy: e-mails go to the organisation owners and admins', async () => {
      const made = await create({ name: 'monthly org key', type: 'organisation-service', scopes: ['api_keys.read'], rotation_policy: { rotation_period: 'monthly' } });
      expect(made.body).toMatchObject({ rotation_period_days: 30, rotation_policy: { rotation_period: 'monthly', key_transition_period_ms: HOUR } });
      k.clock.set(Date.parse(String(made.body.next_rotation_at)) - 6 * DAY);
      const report = await k.rotation.tick();
      expect(report.upcomingNotices).toContain(made.body.id);
      const notice = await smtp.waitFor((m) => m.subject.includes('"monthly org key" will be rotated'));
      expect(notice.to.sort()).toEqual(['admin@example.test', 'owner@example.test']);
    });

    test('expiry warning: once per expiry date, ahead of it', async () => {
      const base = k.clock.now();
      const made = await create({ name: 'expiring', type: 'workspace-service', workspace_id: k.workspaceId, scopes: ['api_keys.read'], expires_at: new Date(base + 10 * DAY).toISOString() });
      expect((await k.rotation.tick()).expiryNotices).not.toContain(made.body.id);
      k.clock.set(base + 4 * DAY);
      expect((await k.rotation.tick()).expiryNotices).toContain(made.body.id);
      expect((await k.rotation.tick()).expiryNotices).not.toContain(made.body.id);
      const warning = await smtp.waitFor((m) => m.subject.includes('"expiring" expires on'));
      expect(warning.to.sort()).toEqual(['admin@example.test', 'owner@example.test']);
      expect(mailsTo('owner@example.test', '"expiring" expires on')).toHaveLength(1);
      // A new expiry date is warned about again.
      await k.call('PUT', `/api-keys/${made.body.id}`, { expires_at: new Date(base + 8 * DAY).toISOString() });
      expect((await k.rotation.tick()).expiryNotices).toContain(made.body.id);
    });
  });

  describe(`API key rotation with two processes [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('two gateways tick at once: the due key is rotated once and announced once', async () => {
      const smtp = await startSmtpServer();
      const a = await startKeysGateway(t.url, smtp.env);
      const b = await startKeysGateway(t.url, smtp.env);
      try {
        await addUser(a.database, a.organisationId, 'owner@example.test', 'owner');
        const made = await a.call<Key>('POST', '/api-keys', { name: 'shared', type: 'organisation-service', scopes: ['api_keys.read'], rotation_policy: { rotation_period: 'weekly' } });
        const due = Date.parse(String(made.body.next_rotation_at));
        a.clock.set(due + 1);
        b.clock.set(due + 1);
        const [ra, rb] = await Promise.all([a.rotation.tick(), b.rotation.tick()]);
        expect([...ra.rotated, ...rb.rotated].filter((id) => id === made.body.id)).toHaveLength(1);
        await smtp.waitFor((m) => m.subject.includes('"shared" was rotated'));
        await Promise.all([a.rotation.tick(), b.rotation.tick()]);
        await Bun.sleep(200);
        expect(smtp.messages.filter((m) => m.subject.includes('"shared" was rotated'))).toHaveLength(1);
        const row = await a.database.findOne(apiKeys, 'id', made.body.id, { fresh: true });
        expect(row?.next_rotation_at).toBe(due + 7 * DAY);
      } finally {
        await a.close();
        await b.close();
        await smtp.close();
      }
    }, SETUP_TIMEOUT_MS);

    test('an e-mail the SMTP server refuses is not marked sent: a later tick tries again', async () => {
      const smtp = await startSmtpServer({ user: 'mailer', pass: 'right' });
      const k = await startKeysGateway(t.url, { ...smtp.env, SMTP_PASS: 'wrong' });
      try {
        await addUser(k.database, k.organisationId, `refused-${crypto.randomUUID()}@example.test`, 'owner');
        const made = await k.call<Key>('POST', '/api-keys', { name: 'unsent', type: 'organisation-service', scopes: ['api_keys.read'], expires_at: new Date(k.clock.now() + DAY).toISOString() });
        const report = await k.rotation.tick();
        expect(report.failed).toContain(made.body.id);
        expect(report.expiryNotices).not.toContain(made.body.id);
        const row = await k.database.findOne(apiKeys, 'id', made.body.id, { fresh: true });
        expect(row?.expiry_notice_for).toBeNull();
        expect(smtp.messages).toHaveLength(0);
        expect((await k.rotation.tick()).failed).toContain(made.body.id); // tried again
        // Marked as sent (as another process that sent it would have): no further attempt.
        await k.database.update(apiKeys, { expiry_notice_for: row?.expires_at ?? 0 }, (c) => eq(c.id, made.body.id));
        expect((await k.rotation.tick()).failed).not.toContain(made.body.id);
      } finally {
        await k.close();
        await smtp.close();
      }
    }, SETUP_TIMEOUT_MS);
  });
}
