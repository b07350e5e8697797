// SCIM 2.0 provisioning (admin/scim) on SQLite and MariaDB, driven the way Microsoft Entra ID and Okta provision:
// their request bodies, capitalised ops, path-less PATCH values, string booleans and member filters. Group-to-
// workspace mapping and its validation; user_api_key_auto_create on provisioning; key removal on deactivation,
// group removal and deletion; the SCIM token; SCIM_MEMBERSHIP_USER_MODE; SCIM_ENABLED=OFF.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

type Body = Record<string, unknown> & { Resources?: Record<string, unknown>[] };

function client(gateway: Gateway) {
  const send = async (method: string, path: string, body: unknown, headers: Record<string, string>) => {
    const res = await gateway.handle(
      new Request(`http://gateway.local/v1${path}`, {
        method,
        headers: { 'content-type': 'application/scim+json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Body, type: res.headers.get('content-type') };
  };
  return {
    admin: (method: string, path: string, body?: unknown) => send(method, path, body, { 'x-gateway-api-key': TEST_ADMIN_KEY }),
    scim: (token: string) => (method: string, path: string, body?: unknown) => send(method, `/scim/v2${path}`, body, { authorization: `Bearer ${token}` }),
  };
}

async function setUp(gateway: Gateway) {
  const { admin, scim } = client(gateway);
  const made = await admin('POST', '/api-keys', { name: 'Entra provisioning', type: 'organisation-service', scopes: ['scim.write'] });
  expect(made.status).toBe(201);
  const token = made.body.key as string;
  const workspaces = await admin('GET', '/workspaces');
  const workspaceId = (workspaces.body.data as { id: string }[])[0]?.id as string;
  return { admin, scim: scim(token), token, workspaceId };
}

for (const dialect of E2E_DIALECTS) {
  describe(`SCIM provisioning [${dialect}]`, () => {
    let db: E2EDatabase;
    let gateway: Gateway;
    let admin: ReturnType<typeof client>['admin'];
    let scim: ReturnType<ReturnType<typeof client>['scim']>;
    let workspaceId: string;
    const keysOf = async (userId: string) => db.query(`SELECT workspace_id FROM api_keys WHERE user_id = '${userId}'`);

    beforeAll(async () => {
      db = await createE2EDatabase(dialect);
      gateway = await startInProcessGateway({ DATABASE_URL: db.url });
      ({ admin, scim, workspaceId } = await setUp(gateway));
      expect((await admin('PUT', '/settings/api-keys', { user_api_key_auto_create: true })).status).toBe(200);
    }, 60_000);
    afterAll(async () => {
      await gateway?.close();
      await db?.drop();
    });

    test('discovery: ServiceProviderConfig, ResourceTypes, Schemas', async () => {
      const config = await scim('GET', '/ServiceProviderConfig');
      expect(config.status).toBe(200);
      expect(config.type).toBe('application/scim+json');
      expect(config.body).toMatchObject({ patch: { supported: true }, filter: { supported: true }, bulk: { supported: false } });
      const types = await scim('GET', '/ResourceTypes');
      expect(types.body.Resources?.map((r) => r.endpoint)).toEqual(['/Users', '/Groups']);
      const schemas = await scim('GET', '/Schemas');
      expect(schemas.body.Resources?.map((r) => r.id)).toEqual([USER, GROUP]);
    });

    test('the SCIM token: missing, unknown, a key without scim.write, a workspace key are SCIM 401/403 errors', async () => {
      const { scim: as } = client(gateway);
      const none = await client(gateway).admin('GET', '/scim/v2/Users');
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ schemas: [ERROR], status: '401', detail: 'Send the SCIM token as Authorization: Bearer <token>' });
      expect((await as('gw-not-a-key-0000000000000000000000')('GET', '/Users')).body).toMatchObject({ status: '401', detail: 'Invalid, revoked or expired SCIM token' });
      const plain = await admin('POST', '/api-keys', { name: 'no scim', type: 'organisation-service', scopes: ['workspaces.read'] });
      expect((await as(plain.body.key as string)('GET', '/Users')).body).toMatchObject({ status: '403', detail: 'The SCIM token needs the scim.write scope' });
      const ws = await admin('POST', '/api-keys', { name: 'ws', type: 'workspace-service', workspace_id: workspaceId, scopes: ['scim.write'] });
      expect((await as(ws.body.key as string)('GET', '/Users')).body).toMatchObject({ status: '403' });
    });

    test('Entra ID: look up, create, conflict, update, deactivate by a path-less Replace, reactivate, delete', async () => {
      const lookup = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "Alice@contoso.com"')}`);
      expect(lookup.body).toMatchObject({ totalResults: 0, Resources: [] });
      const entraUser = {
        schemas: [USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
        externalId: 'alice-oid',
        userName: 'Alice@contoso.com',
        active: true,
        displayName: 'Alice Smith',
        emails: [{ primary: true, type: 'work', value: 'Alice@contoso.com' }],
        name: { formatted: 'Alice Smith', familyName: 'Smith', givenName: 'Alice' },
        roles: [{ primary: 'True', type: 'WindowsAzureActiveDirectoryRole', value: 'ADMIN' }],
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'R&D' },
      };
      const created = await scim('POST', '/Users', entraUser);
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        schemas: [USER],
        externalId: 'alice-oid',
        userName: 'Alice@contoso.com',
        displayName: 'Alice Smith',
        active: true,
        emails: [{ value: 'alice@contoso.com', primary: true }],
        roles: [{ value: 'admin' }],
        meta: { resourceType: 'User' },
      });
      const id = created.body.id as string;
      expect((await admin('GET', `/users/${id}`)).body).toMatchObject({ email: 'alice@contoso.com', role: 'admin' });
      const again = await scim('POST', '/Users', entraUser);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ schemas: [ERROR], status: '409', scimType: 'uniqueness' });
      for (const filter of ['userName eq "alice@contoso.com"', 'externalId eq "alice-oid"', 'displayName eq "Alice Smith"']) {
        const found = await scim('GET', `/Users?filter=${encodeURIComponent(filter)}`);
        expect(found.body).toMatchObject({ totalResults: 1, startIndex: 1, itemsPerPage: 1 });
        expect(found.body.Resources?.[0]?.id).toBe(id);
      }
      const bad = await scim('GET', `/Users?filter=${encodeURIComponent('title co "x"')}`);
      expect(bad.body).toMatchObject({ status: '400', scimType: 'invalidFilter' });

      const patched = await scim('PATCH', `/Users/${id}`, {
        schemas: [PATCH],
        Operations: [
          { op: 'Replace', path: 'displayName', value: 'Alice S.' },
          { op: 'Add', path: 'name.givenName', value: 'Ali' },
          { op: 'Replace', path: 'emails[type eq "work"].value', value: 'alice.smith@contoso.com' },
          { op: 'Replace', path: 'roles', value: [{ value: 'Member' }] },
          { op: 'Add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'Ops' },
        ],
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ displayName: 'Alice S.', name: { givenName: 'Ali', familyName: 'Smith' }, emails: [{ value: 'alice.smith@contoso.com' }], roles: [{ value: 'member' }] });

      // Entra's deactivation: a path-less Replace with a string boolean in some tenants, a plain one in others.
      const off = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', value: { active: 'False' } }] });
      expect(off.body.active).toBe(false);
      const on = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: true }] });
      expect(on.body.active).toBe(true);
      const off2 = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false, 'name.familyName': 'Smythe' } }] });
      expect(off2.body).toMatchObject({ active: false, name: { familyName: 'Smythe' } });

      expect((await scim('DELETE', `/Users/${id}`)).status).toBe(204);
      expect((await scim('GET', `/Users/${id}`)).body).toMatchObject({ schemas: [ERROR], status: '404' });
      expect((await admin('GET', `/users/${id}`)).status).toBe(404);
    });

    test('groups mapped to a workspace: members get a membership and their auto-created key; removal, deactivation and deletion remove keys', async () => {
      const carol = (await scim('POST', '/Users', { schemas: [USER], userName: 'carol@contoso.com', externalId: 'carol', active: true })).body.id as string;
      const dave = (await scim('POST', '/Users', { schemas: [USER], userName: 'dave@contoso.com', externalId: 'dave', active: true })).body.id as string;
      // Entra creates the group empty, then adds members by PATCH.
      const group = await scim('POST', '/Groups', { schemas: [GROUP], externalId: 'eng-oid', displayName: 'Engineering', members: [] });
      expect(group.status).toBe(201);
      const groupId = group.body.id as string;
      const mapped = await admin('POST', '/scim/workspaces', { workspace_id: workspaceId, role: 'Manager', scim_group_id: groupId });
      expect(mapped.status).toBe(200);
      expect(mapped.body).toMatchObject({ scim_group_id: groupId, workspace_id: workspaceId, role: 'manager', created_group: false });

      const add = await scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'Add', path: 'members', value: [{ value: carol }, { value: dave }] }] });
      expect(add.status).toBe(200);
      const members = await admin('GET', `/workspaces/${workspaceId}/users`);
      const roles = Object.fromEntries(((members.body.data ?? []) as { id: string; role: string }[]).map((m) => [m.id, m.role]));
      expect(roles[carol]).toBe('manager');
      expect(roles[dave]).toBe('manager');
      expect(await keysOf(carol)).toEqual([{ workspace_id: workspaceId }]);
      expect(await keysOf(dave)).toEqual([{ workspace_id: workspaceId }]);

      const withMembers = await scim('GET', `/Groups/${groupId}`);
      expect((withMembers.body.members as { value: string }[]).map((m) => m.value).sort()).toEqual([carol, dave].sort());
      const without = await scim('GET', `/Groups/${groupId}?excludedAttributes=members`);
      expect(without.body.members).toBeUndefined();
      expect((await scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "Engineering"')}`)).body).toMatchObject({ totalResults: 1 });

      // Entra removes a member with a value list.
      await scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'Remove', path: 'members', value: [{ value: dave }] }] });
      expect(await keysOf(dave)).toEqual([]);
      expect(await keysOf(carol)).toEqual([{ workspace_id: workspaceId }]);
      // Deactivation removes the user's keys too.
      await scim('PATCH', `/Users/${carol}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
      expect(await keysOf(carol)).toEqual([]);
      // Entra renames with a path-less replace.
      const renamed = await scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'Replace', value: { id: groupId, displayName: 'Eng' } }] });
      expect(renamed.body.displayName).toBe('Eng');
      expect((await scim('DELETE', `/Groups/${groupId}`)).status).toBe(204);
      expect((await admin('GET', `/workspaces/${workspaceId}/users`)).body.data as unknown[]).not.toContainEqual(expect.objectContaining({ id: carol }));
    });

    test('Okta: create with groups ignored, push a group with members, remove by members[value eq], PUT to deactivate, pagination', async () => {
      const okta = async (login: string) =>
        (
          await scim('POST', '/Users', {
            schemas: [USER],
            userName: login,
            name: { givenName: login.split('@')[0], familyName: 'Okta' },
            emails: [{ primary: true, value: login, type: 'work' }],
            displayName: `${login} Okta`,
            locale: 'en-US',
            externalId: `00u-${login}`,
            groups: [],
            password: 'ignored-1A!',
            active: true,
          })
        ).body.id as string;
      const erin = await okta('erin@okta.example');
      const frank = await okta('frank@okta.example');
      const mapping = await admin('POST', '/scim/workspaces', { workspace_id: workspaceId, role: 'member', scim_group_name: 'Okta Engineers' });
      expect(mapping.status).toBe(201);
      expect(mapping.body.created_group).toBe(true);
      const groupId = mapping.body.scim_group_id as string;
      // Okta's group push: a PUT of the whole group with its members.
      const pushed = await scim('PUT', `/Groups/${groupId}`, { schemas: [GROUP], id: groupId, displayName: 'Okta Engineers', members: [{ value: erin, display: 'erin' }, { value: frank, display: 'frank' }] });
      expect(pushed.status).toBe(200);
      expect(await keysOf(erin)).toEqual([{ workspace_id: workspaceId }]);
      const removed = await scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${frank}"]` }] });
      expect(removed.status).toBe(200);
      expect(await keysOf(frank)).toEqual([]);
      expect(await keysOf(erin)).toEqual([{ workspace_id: workspaceId }]);
      // Okta deactivates with a PUT of the whole user, active false.
      const current = (await scim('GET', `/Users/${erin}`)).body;
      const put = await scim('PUT', `/Users/${erin}`, { ...current, active: false });
      expect(put.body.active).toBe(false);
      expect(await keysOf(erin)).toEqual([]);
      const unknownMember = await scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: 'no-such-user' }] }] });
      expect(unknownMember.body).toMatchObject({ status: '400', scimType: 'invalidValue' });

      const all = await scim('GET', '/Users');
      const total = all.body.totalResults as number;
      expect(total).toBeGreaterThanOrEqual(2);
      const second = await scim('GET', '/Users?startIndex=2&count=1');
      expect(second.body).toMatchObject({ totalResults: total, startIndex: 2, itemsPerPage: 1 });
      expect(second.body.Resources?.[0]?.id).toBe(all.body.Resources?.[1]?.id);
    });

    test('ownership is not given, taken or deleted by SCIM', async () => {
      const made = await scim('POST', '/Users', { schemas: [USER], userName: 'olga@contoso.com', roles: [{ value: 'Owner' }] });
      expect(made.body).toMatchObject({ status: '400', scimType: 'invalidValue', detail: 'The owner role is given only through the administration API, never by SCIM' });
      const id = (await scim('POST', '/Users', { schemas: [USER], userName: 'olga@contoso.com' })).body.id as string;
      expect((await admin('PUT', `/users/${id}`, { role: 'owner' })).status).toBe(200);
      // A provisioning run sends the role the identity provider maps: the owner stays owner.
      const current = (await scim('GET', `/Users/${id}`)).body;
      const put = await scim('PUT', `/Users/${id}`, { ...current, roles: [{ value: 'Admin' }] });
      expect(put.body.roles).toEqual([{ value: 'owner', primary: true }]);
      const removed = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: 'roles' }] });
      expect(removed.body.roles).toEqual([{ value: 'owner', primary: true }]);
      const deleted = await scim('DELETE', `/Users/${id}`);
      expect(deleted.body).toMatchObject({ status: '400', scimType: 'mutability' });
      expect((await admin('GET', `/users/${id}`)).body).toMatchObject({ role: 'owner' });
    });

    test('POST /scim/workspaces validation', async () => {
      const group = (await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Validation group' })).body.id as string;
      const cases: [unknown, number, RegExp][] = [
        [{ role: 'member', scim_group_id: group }, 400, /workspace_id is required/],
        [{ workspace_id: workspaceId, scim_group_id: group }, 400, /role is required/],
        [{ workspace_id: workspaceId, role: 'owner', scim_group_id: group }, 400, /role must be one of admin, manager, member/],
        [{ workspace_id: workspaceId, role: 'member' }, 400, /exactly one of scim_group_id and scim_group_name/],
        [{ workspace_id: workspaceId, role: 'member', scim_group_id: group, scim_group_name: 'x' }, 400, /exactly one/],
        [{ workspace_id: workspaceId, role: 'member', scim_group_id: 'nope' }, 404, /No such SCIM group/],
        [{ workspace_id: 'no-such-workspace', role: 'member', scim_group_id: group }, 404, /No such workspace: workspace_id/],
        [{ workspace_id: workspaceId, role: 'member', scim_group_id: group, extra: 1 }, 400, /Unknown field extra/],
      ];
      for (const [body, status, message] of cases) {
        const res = await admin('POST', '/scim/workspaces', body);
        expect(res.status).toBe(status);
        expect((res.body.error as { message: string }).message).toMatch(message);
      }
      expect((await admin('POST', '/scim/workspaces', { workspace_id: workspaceId, role: 'ADMIN', scim_group_id: group })).status).toBe(200);
    });
  });
}

describe('SCIM switches [sqlite]', () => {
  test('SCIM_MEMBERSHIP_USER_MODE=ON: /Users carries groups and sets them; member operations of /Groups PATCH are skipped', async () => {
    const gateway = await startInProcessGateway({ SCIM_MEMBERSHIP_USER_MODE: 'ON' });
    try {
      const { admin, scim, workspaceId } = await setUp(gateway);
      const group = (await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Mode group' })).body.id as string;
      await admin('POST', '/scim/workspaces', { workspace_id: workspaceId, role: 'member', scim_group_id: group });
      const user = await scim('POST', '/Users', { schemas: [USER], userName: 'gina@example.com', groups: [{ value: group }] });
      expect(user.body.groups).toEqual([{ value: group, display: 'Mode group' }]);
      const id = user.body.id as string;
      // Skipped: the Groups PATCH does not remove her.
      const skipped = await scim('PATCH', `/Groups/${group}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }] });
      expect(skipped.status).toBe(200);
      expect((await scim('GET', `/Users/${id}`)).body.groups).toEqual([{ value: group, display: 'Mode group' }]);
      const members = await admin('GET', `/workspaces/${workspaceId}/users`);
      expect((members.body.data as { id: string }[]).map((m) => m.id)).toContain(id);
      // Through /Users: removed.
      const out = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: 'groups', value: [{ value: group }] }] });
      expect(out.body.groups).toEqual([]);
      expect(((await admin('GET', `/workspaces/${workspaceId}/users`)).body.data as { id: string }[]).map((m) => m.id)).not.toContain(id);
    } finally {
      await gateway.close();
    }
  });

  test('SCIM_ENABLED=OFF switches every SCIM route off', async () => {
    const gateway = await startInProcessGateway({ SCIM_ENABLED: 'OFF' });
    try {
      const { admin } = client(gateway);
      const res = await admin('GET', '/scim/v2/Users');
      expect(res.status).toBe(403);
      expect((res.body.error as { code: string }).code).toBe('feature_disabled');
      expect((await admin('POST', '/scim/workspaces', { workspace_id: 'x', role: 'member', scim_group_name: 'y' })).status).toBe(403);
    } finally {
      await gateway.close();
    }
  });
});
