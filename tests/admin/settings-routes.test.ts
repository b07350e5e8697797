// The settings routes over HTTP on SQLite and MariaDB: security settings with workspace overrides, session and
// API-key settings, email domains; who may call what; 400s naming the field; the audit entries changes leave; the
// services other plugins read (securitySettings, organisationSettings, sessionSettings) agreeing with the routes.
import { describe, expect, test } from 'bun:test';
import { AdminServices } from '@gateway/admin-kit';
import { SCOPES, SettingsServices } from '@gateway/admin-settings';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type Json, useSettingsGateway } from './settings-support.ts';
import { Services } from '@gateway/sdk';

const DEFAULTS = {
  organisationAdminsViewLogs: true,
  organisationAdminsViewLogMetadata: true,
  membersViewAllData: true,
  managersViewAllData: true,
  membersViewPrompts: true,
  membersWritePrompts: false,
  managersViewPrompts: true,
  managersWritePrompts: true,
  membersViewAnalytics: true,
  managersViewAnalytics: true,
  managersWriteWsIntegrations: true,
  managersWriteWsMcpIntegrations: true,
  managersWriteMcpServers: true,
};

const errorOf = (body: Json) => body.error as { message: string; param: string | null; code: string };

describe.each(E2E_DIALECTS)('settings routes (%s)', (dialect) => {
  const gw = useSettingsGateway(dialect);

  test('security settings: SPEC defaults, organisation changes, 400s naming the field, the audit entry', async () => {
    const { call, organisationId } = gw();
    const initial = await call('GET', '/settings/security');
    expect(initial).toEqual({ status: 200, body: { object: 'security_settings', organisation_id: organisationId, ...DEFAULTS } });

    const changed = await call('PUT', '/settings/security', { membersViewAllData: false, membersWritePrompts: true });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ membersViewAllData: false, membersWritePrompts: true, managersViewAllData: true });
    expect((await call('GET', '/settings/security')).body).toMatchObject({ membersViewAllData: false, membersWritePrompts: true });

    const wrongType = await call('PUT', '/settings/security', { membersViewAllData: 'no', managersViewAllData: false });
    expect(wrongType.status).toBe(400);
    expect(errorOf(wrongType.body)).toMatchObject({ param: 'membersViewAllData', message: expect.stringContaining('membersViewAllData must be a boolean') });
    const unknown = await call('PUT', '/settings/security', { membersSeeEverything: true });
    expect(unknown.status).toBe(400);
    expect(errorOf(unknown.body).param).toBe('membersSeeEverything');
    expect((await call('PUT', '/settings/security', [true])).status).toBe(400);
    // Nothing of a refused body was written.
    expect((await call('GET', '/settings/security')).body).toMatchObject({ managersViewAllData: true });

    const reset = await call('PUT', '/settings/security', { membersWritePrompts: null });
    expect(reset.body).toMatchObject({ membersWritePrompts: false, membersViewAllData: false });

    const audit = await call<{ data: Json[] }>('GET', '/audit-logs?resource=security_settings');
    expect(audit.status).toBe(200);
    expect(audit.body.data).toHaveLength(2); // the refused bodies left none
    // Entries of one millisecond have no order: found by what they hold.
    const resetEntry = audit.body.data.find((e) => (e.after as Json).membersWritePrompts === false && (e.before as Json).membersWritePrompts === true);
    expect(resetEntry).toMatchObject({ action: 'update', resource_id: organisationId, method: 'PUT', status: 200 });
  });

  test('workspace overrides: only the overridable keys (a non-overridable one is a 400 naming it); by id or slug; null removes', async () => {
    const { call, gateway, organisationId, workspaceId } = gw();
    const security = gateway.service(AdminServices.securitySettings);
    await call('PUT', '/settings/security', { membersViewAllData: false, organisationAdminsViewLogs: true });

    const put = await call('PUT', '/workspaces/default/settings/security', { membersViewAllData: true, organisationAdminsViewLogMetadata: false });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      object: 'workspace_security_settings',
      workspace_id: workspaceId,
      overrides: { membersViewAllData: true, organisationAdminsViewLogMetadata: false },
      effective: { ...DEFAULTS, membersViewAllData: true, organisationAdminsViewLogMetadata: false },
    });
    expect(await security.get(organisationId, workspaceId)).toMatchObject({ membersViewAllData: true, organisationAdminsViewLogMetadata: false });
    expect(await security.get(organisationId, null)).toMatchObject({ membersViewAllData: false, organisationAdminsViewLogMetadata: true });

    const notOverridable = await call('PUT', `/workspaces/${workspaceId}/settings/security`, { membersViewPrompts: false });
    expect(notOverridable.status).toBe(400);
    expect(errorOf(notOverridable.body)).toMatchObject({ param: 'membersViewPrompts', message: expect.stringContaining('membersViewPrompts cannot be overridden per workspace') });

    const removed = await call('PUT', `/workspaces/${workspaceId}/settings/security`, { membersViewAllData: null });
    expect(removed.body).toMatchObject({ overrides: { organisationAdminsViewLogMetadata: false }, effective: { membersViewAllData: false } });
    expect((removed.body.overrides as Json).membersViewAllData).toBeUndefined();
    expect((await call('GET', '/workspaces/default/settings/security')).body).toEqual(removed.body);
    expect((await call('GET', '/workspaces/no-such-workspace/settings/security')).status).toBe(404);

    const audit = await call<{ data: Json[] }>('GET', '/audit-logs?resource=workspace_security_settings');
    expect(audit.body.data[0]).toMatchObject({ workspace_id: workspaceId, resource_id: workspaceId, action: 'update' });
  });

  test('who may call: organisation owners and admins; workspace admins for their workspace only; scopes', async () => {
    const { call, addWorkspace, addUser, addKey, workspaceId } = gw();
    const other = await addWorkspace(`other-${crypto.randomUUID().slice(0, 8)}`);
    const scopes = ['settings.read', 'settings.write', 'email_domains.read', 'email_domains.write'];
    const wsAdmin = await addUser(`ws-admin-${crypto.randomUUID()}@x.test`, 'member', { [workspaceId]: 'admin', [other]: 'member' });
    const manager = await addUser(`manager-${crypto.randomUUID()}@x.test`, 'member', { [workspaceId]: 'manager' });
    const orgAdmin = await addUser(`org-admin-${crypto.randomUUID()}@x.test`, 'admin');
    const wsAdminKey = (await addKey({ type: 'workspace-user', workspaceId, userId: wsAdmin, scopes })).secret;
    const managerKey = (await addKey({ type: 'workspace-user', workspaceId, userId: manager, scopes })).secret;
    const orgAdminKey = (await addKey({ type: 'workspace-user', workspaceId, userId: orgAdmin, scopes })).secret;
    const serviceKey = (await addKey({ type: 'workspace-service', workspaceId, scopes })).secret;
    const readOnly = (await addKey({ type: 'organisation-service', workspaceId: null, scopes: ['settings.read'] })).secret;

    for (const path of ['/settings/security', '/settings/session', '/settings/api-keys', '/email-domains']) {
      expect([path, (await call('GET', path, undefined, orgAdminKey)).status]).toEqual([path, 200]);
      expect([path, (await call('GET', path, undefined, wsAdminKey)).status]).toEqual([path, 403]);
      expect([path, (await call('GET', path, undefined, serviceKey)).status]).toEqual([path, 403]);
    }
    expect((await call('GET', '/settings/security', undefined, readOnly)).status).toBe(200);
    expect((await call('PUT', '/settings/security', { membersViewAllData: true }, readOnly)).status).toBe(403);

    const wsPath = `/workspaces/${workspaceId}/settings/security`;
    expect((await call('PUT', wsPath, { managersViewAllData: false }, wsAdminKey)).status).toBe(200);
    expect((await call('GET', `/workspaces/${workspaceId}/settings/api-keys`, undefined, wsAdminKey)).status).toBe(200);
    expect((await call('GET', wsPath, undefined, serviceKey)).status).toBe(200);
    expect((await call('GET', wsPath, undefined, orgAdminKey)).status).toBe(200);
    expect((await call('GET', wsPath, undefined, managerKey)).status).toBe(403);
    expect((await call('PUT', wsPath, { managersViewAllData: true }, managerKey)).status).toBe(403);
    // A member of the other workspace only: 403; the service key has no role there at all: 404.
    expect((await call('GET', `/workspaces/${other}/settings/security`, undefined, wsAdminKey)).status).toBe(403);
    expect((await call('GET', `/workspaces/${other}/settings/security`, undefined, serviceKey)).status).toBe(404);
    // A role does not stand in for a scope.
    const noScope = (await addKey({ type: 'workspace-user', workspaceId, userId: orgAdmin, scopes: ['logs.read'] })).secret;
    expect((await call('GET', '/settings/security', undefined, noScope)).status).toBe(403);
  });

  test('session settings: max_session_ttl at least 900 seconds; SPEC nesting accepted; null removes the limit', async () => {
    const { call, gateway, organisationId } = gw();
    expect((await call('GET', '/settings/session')).body).toEqual({ object: 'session_settings', organisation_id: organisationId, max_session_ttl: null });
    const low = await call('PUT', '/settings/session', { max_session_ttl: 899 });
    expect(low.status).toBe(400);
    expect(errorOf(low.body)).toMatchObject({ param: 'max_session_ttl', message: expect.stringContaining('at least 900') });
    expect((await call('PUT', '/settings/session', { max_session_ttl: 3600 })).body).toMatchObject({ max_session_ttl: 3600 });
    expect((await call('PUT', '/settings/session', { session_settings: { max_session_ttl: 7200 } })).body).toMatchObject({ max_session_ttl: 7200 });
    const service = gateway.service(SettingsServices.session);
    expect(await service.get(organisationId)).toEqual({ max_session_ttl: 7200 });
    expect((await call('PUT', '/settings/session', { max_session_ttl: null })).body).toMatchObject({ max_session_ttl: null });
    const audit = await call<{ data: Json[] }>('GET', '/audit-logs?resource=session_settings');
    expect(audit.body.data.map((e) => [(e.before as Json).max_session_ttl, (e.after as Json).max_session_ttl]).sort()).toEqual([
      [3600, 7200],
      [7200, null],
      [null, 3600],
    ].sort());
  });

  test('API-key settings: organisation values, workspace overrides (ttl per workspace only), the organisationSettings service', async () => {
    const { call, gateway, organisationId, workspaceId } = gw();
    const service = gateway.service(AdminServices.organisationSettings);
    expect((await call('GET', '/settings/api-keys')).body).toEqual({
      object: 'api_key_settings',
      organisation_id: organisationId,
      user_api_key_auto_create: false,
      user_api_key_rotation_period: null,
    });
    const org = await call('PUT', '/settings/api-keys', { user_api_key_auto_create: true, user_api_key_rotation_period: 'monthly' });
    expect(org.body).toMatchObject({ user_api_key_auto_create: true, user_api_key_rotation_period: 'monthly' });
    const ttlAtOrg = await call('PUT', '/settings/api-keys', { user_api_key_ttl: 3600 });
    expect([ttlAtOrg.status, errorOf(ttlAtOrg.body).param]).toEqual([400, 'user_api_key_ttl']);
    const badPeriod = await call('PUT', '/settings/api-keys', { user_api_key_rotation_period: 'daily' });
    expect([badPeriod.status, errorOf(badPeriod.body).param]).toEqual([400, 'user_api_key_rotation_period']);

    const path = `/workspaces/${workspaceId}/settings/api-keys`;
    const ws = await call('PUT', path, { user_api_key_ttl: 86_400, user_api_key_rotation_period: null });
    expect(ws.body).toEqual({
      object: 'workspace_api_key_settings',
      workspace_id: workspaceId,
      overrides: { user_api_key_rotation_period: null, user_api_key_ttl: 86_400 },
      effective: { user_api_key_auto_create: true, user_api_key_rotation_period: null, user_api_key_ttl: 86_400 },
    });
    expect(await service.keySettings(organisationId, workspaceId)).toEqual({ user_api_key_auto_create: true, user_api_key_rotation_period: null, user_api_key_ttl: 86_400 });
    expect(await service.keySettings(organisationId, null)).toEqual({ user_api_key_auto_create: true, user_api_key_rotation_period: 'monthly', user_api_key_ttl: null });

    const shortTtl = await call('PUT', path, { user_api_key_ttl: 59 });
    expect([shortTtl.status, errorOf(shortTtl.body).param]).toEqual([400, 'user_api_key_ttl']);
    const inherited = await call('PUT', path, { inherit: ['user_api_key_rotation_period'] });
    expect(inherited.body).toMatchObject({ overrides: { user_api_key_ttl: 86_400 }, effective: { user_api_key_rotation_period: 'monthly' } });
    expect(await service.keySettings(organisationId, workspaceId)).toMatchObject({ user_api_key_rotation_period: 'monthly' });
    await call('PUT', '/settings/api-keys', { user_api_key_auto_create: null, user_api_key_rotation_period: null });
    expect(await service.keySettings(organisationId, workspaceId)).toEqual({ user_api_key_auto_create: false, user_api_key_rotation_period: null, user_api_key_ttl: 86_400 });

    const orgAudit = await call<{ data: Json[] }>('GET', '/audit-logs?resource=api_key_settings');
    expect(orgAudit.body.data).toHaveLength(2);
    expect(orgAudit.body.data.some((e) => (e.before as Json).user_api_key_auto_create === true && (e.after as Json).user_api_key_auto_create === false)).toBe(true);
    const wsAudit = await call<{ data: Json[] }>('GET', '/audit-logs?resource=workspace_api_key_settings');
    expect(wsAudit.body.data).toHaveLength(2);
    expect(wsAudit.body.data.every((e) => e.workspace_id === workspaceId && e.resource_id === workspaceId)).toBe(true);
  });

  test("the plugin's scopes join the key scope catalogue, so keys can be given them", async () => {
    const catalogue = gw().gateway.service(Services.apiKeyScopes);
    for (const scope of SCOPES) expect([scope, catalogue.has(scope)]).toEqual([scope, true]);
  });

  test('email domains: CRUD, lower case, unique per organisation, the subdomain rule, the audit entries', async () => {
    const { call } = gw();
    const root = await call('POST', '/email-domains', { domain: 'Example.COM', allow_subdomains: true });
    expect(root.status).toBe(201);
    expect(root.body).toMatchObject({ object: 'email_domain', domain: 'example.com', allow_subdomains: true });
    const rootId = root.body.id as string;

    const again = await call('POST', '/email-domains', { domain: 'example.com' });
    expect([again.status, errorOf(again.body).param]).toEqual([409, 'domain']);
    const sub = await call('POST', '/email-domains', { domain: 'eng.example.com', allow_subdomains: true });
    expect(sub.status).toBe(400);
    expect(errorOf(sub.body)).toMatchObject({ param: 'allow_subdomains', message: expect.stringContaining('eng.example.com is a subdomain of example.com') });
    const invalid = await call('POST', '/email-domains', { domain: 'not a domain' });
    expect([invalid.status, errorOf(invalid.body).param]).toEqual([400, 'domain']);
    const extra = await call('POST', '/email-domains', { domain: 'ok.test', sso: true });
    expect([extra.status, errorOf(extra.body).param]).toEqual([400, 'sso']);
    const wrongType = await call('POST', '/email-domains', { domain: 'ok.test', allow_subdomains: 'yes' });
    expect([wrongType.status, errorOf(wrongType.body).param]).toEqual([400, 'allow_subdomains']);

    const plainSub = await call('POST', '/email-domains', { domain: 'eng.example.com' });
    expect(plainSub.status).toBe(201);
    const subId = plainSub.body.id as string;
    expect((await call('PUT', `/email-domains/${subId}`, { allow_subdomains: true })).status).toBe(400);

    const listed = await call<{ object: string; data: Json[]; total: number }>('GET', '/email-domains?page_size=1&current_page=1');
    expect(listed.body).toMatchObject({ object: 'list', total: 2 });
    expect(listed.body.data.map((d) => d.domain)).toEqual(['example.com']); // sorted by name: eng.example.com first
    expect((await call('GET', `/email-domains/${rootId}`)).body).toMatchObject({ domain: 'example.com' });
    expect((await call('GET', '/email-domains/EXAMPLE.com')).body).toMatchObject({ id: rootId });
    expect((await call('GET', '/email-domains/nothing.test')).status).toBe(404);

    // With the root gone, the subdomain is a root of its own; a new parent cannot then swallow it.
    expect((await call('DELETE', `/email-domains/${rootId}`)).status).toBe(204);
    expect((await call('PUT', `/email-domains/${subId}`, { allow_subdomains: true })).body).toMatchObject({ domain: 'eng.example.com', allow_subdomains: true });
    const parent = await call('POST', '/email-domains', { domain: 'example.com' });
    expect(parent.status).toBe(400);
    expect(errorOf(parent.body)).toMatchObject({ param: 'domain', message: expect.stringContaining('eng.example.com, a subdomain of example.com, has allow_subdomains on') });
    const renamed = await call('PUT', `/email-domains/${subId}`, { domain: 'Corp.Example.org' });
    expect(renamed.body).toMatchObject({ domain: 'corp.example.org', allow_subdomains: true });

    const audit = await call<{ data: Json[] }>('GET', `/audit-logs?resource=email_domain&resource_id=${subId}`);
    expect(audit.body.data.map((e) => e.action).sort()).toEqual(['create', 'update', 'update']);
    expect(audit.body.data.find((e) => (e.after as Json).domain === 'corp.example.org')).toMatchObject({ before: { domain: 'eng.example.com' } });
    const deleted = await call<{ data: Json[] }>('GET', `/audit-logs?resource=email_domain&resource_id=${rootId}&action=delete`);
    expect(deleted.body.data[0]).toMatchObject({ before: { domain: 'example.com' } });
  });
});
