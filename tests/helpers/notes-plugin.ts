/**
 * A tiny third-party admin plugin for tests of the administration machinery (audit log, HADR): `test_notes`, a
 * table with CRUD routes under /v1/test-notes (and a public POST /v1/test-public-notes) that fill `req.audit` like
 * a real feature would. It lives in a temporary project root outside the repository, passed to the gateway as an
 * extra root; it imports the SDK by absolute path because that folder has no node_modules. Its audit records deliberately carry secret-looking
 * fields (`secret`, `nested.api_key`) to show the audit log redacts them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './gateway-process.ts';

export const NOTES_PLUGIN = 'gateway-test-notes';

const source = (sdk: string) => `import { col, defineTable, definePlugin, desc, eq, Errors, Services, type AdminRequest, type Database } from ${JSON.stringify(sdk)};

const notes = defineTable('test_notes', {
  id: col.id(),
  organisation_id: col.ref(),
  title: col.string(64),
  secret: col.string(64).nullable(),
  created_at: col.timestamp().default(Date.now),
});
type Note = { id: string; organisation_id: string; title: string; secret: string | null; created_at: number };

const show = (row: Note) => ({ id: row.id, title: row.title });

function title(body: unknown): string {
  const value = (body as { title?: unknown } | undefined)?.title;
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) throw Errors.badRequest('title must be a string of 1 to 64 characters', 'title');
  return value;
}

export default definePlugin({
  async setup(api) {
    const db = api.service(Services.database);
    await db.migrate([{ id: 'test-notes/0001', tables: [notes] }]);
    const mine = async (req: AdminRequest): Promise<Note> => {
      const row = (await db.findOne(notes, 'id', req.params.id ?? '', { fresh: true })) as Note | undefined;
      if (!row || row.organisation_id !== req.caller.organisationId) throw Errors.notFound('No such note');
      return row;
    };
    api.route({
      method: 'GET',
      path: '/test-notes',
      scope: 'test_notes.read',
      async handle(req) {
        const rows = (await db.select(notes, { where: (c) => eq(c.organisation_id, req.caller.organisationId), orderBy: (c) => desc(c.created_at) })) as Note[];
        return Response.json({ object: 'list', data: rows.map(show), total: rows.length });
      },
    });
    api.route({ method: 'GET', path: '/test-notes/:id', scope: 'test_notes.read', handle: async (req) => Response.json(show(await mine(req))) });
    api.route({
      method: 'POST',
      path: '/test-notes',
      scope: 'test_notes.write',
      async handle(req) {
        const row: Note = { id: crypto.randomUUID(), organisation_id: req.caller.organisationId, title: title(req.body), secret: 'note-secret-value', created_at: Date.now() };
        await db.insert(notes, row);
        Object.assign(req.audit, {
          resource: 'test_note',
          resourceId: row.id,
          workspaceId: req.caller.workspaceId,
          after: { ...show(row), secret: row.secret, nested: { api_key: 'sk-should-never-be-stored', key_type: 'plain' } },
        });
        return Response.json(show(row), { status: 201 });
      },
    });
    // Public (no key): an organisation named in the body, as an invitation accepted by its token would be.
    api.route({
      public: true,
      method: 'POST',
      path: '/test-public-notes',
      async handle(req) {
        const organisationId = (req.body as { organisation_id?: unknown } | undefined)?.organisation_id;
        if (typeof organisationId !== 'string' || !organisationId) throw Errors.badRequest('organisation_id is required', 'organisation_id');
        const row: Note = { id: crypto.randomUUID(), organisation_id: organisationId, title: title(req.body), secret: null, created_at: Date.now() };
        await db.insert(notes, row);
        Object.assign(req.audit, { organisationId, resource: 'test_note', resourceId: row.id, after: show(row) });
        return Response.json(show(row), { status: 201 });
      },
    });
    api.route({
      method: 'PUT',
      path: '/test-notes/:id',
      scope: 'test_notes.write',
      async handle(req) {
        const next = title(req.body);
        const before = await mine(req);
        await db.update(notes, { title: next }, (c) => eq(c.id, before.id));
        Object.assign(req.audit, { resource: 'test_note', resourceId: before.id, before: show(before), after: { ...show(before), title: next } });
        return Response.json({ ...show(before), title: next });
      },
    });
    api.route({
      method: 'DELETE',
      path: '/test-notes/:id',
      scope: 'test_notes.write',
      async handle(req) {
        const before = await mine(req);
        await db.delete(notes, (c) => eq(c.id, before.id));
        Object.assign(req.audit, { resource: 'test_note', resourceId: before.id, before: show(before) });
        return new Response(null, { status: 204 });
      },
    });
  },
});
`;

export interface NotesProject {
  /** The project root to pass to the gateway (`roots`, or TEST_EXTRA_ROOTS for the process fixture). */
  root: string;
  remove(): void;
}

/** Writes the project root with the notes plugin into a new temporary folder. */
export function writeNotesProject(): NotesProject {
  const root = mkdtempSync(join(tmpdir(), 'gw-notes-'));
  const dir = join(root, 'notes');
  mkdirSync(dir);
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'gw-test-notes-project', private: true, workspaces: ['notes'] }, null, 2));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: NOTES_PLUGIN, version: '1.0.0', type: 'module', gateway: { api: 1, entry: './index.ts' } }, null, 2),
  );
  writeFileSync(join(dir, 'index.ts'), source(join(ROOT, 'core/sdk/src/index.ts')));
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
