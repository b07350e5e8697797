// The RBAC matrix (issue 7): every administration route the gateway registers, called by every principal of
// tests/admin/rbac/principals.ts (each role, each key type, a key without scopes), on SQLite and on MariaDB, through
// a whole in-process gateway. Each answer must be exactly what tests/admin/rbac/matrix.ts says: a 2xx, a 403 or a
// 404. A registered route without a row fails the first test, so no route escapes the matrix.
// The data plane (issue 13): one call of every kind of gateway route, by the same principals and by keys holding
// one scope each, as tests/admin/rbac/data-plane.ts says; a kind of route without a row fails its first test.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type EndpointKind, GATEWAY_CALL_SCOPES, JOB_CALL_SCOPES } from '@gateway/sdk';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { ANTHROPIC_SHAPED_KINDS, createDataPlane, DATA_PLANE_CALLERS, DATA_PLANE_CALLS, DATA_PLANE_MATRIX, type DataPlane } from './rbac/data-plane.ts';
import { fillPath } from './rbac/fixture.ts';
import { createJobPlane, isKept, JOB_CALLS, JOB_MATRIX, type JobPlane } from './rbac/job-calls.ts';
import { FIXTURES } from './rbac/fixtures/index.ts';
import { MATRIX, type MatrixRow, type Outcome, PUBLIC_ROUTES } from './rbac/matrix.ts';
import { COLUMNS, PRINCIPALS } from './rbac/principals.ts';
import { type Answer, createWorld, type World } from './rbac/world.ts';

function matches(expected: Outcome, answer: Answer, kind?: EndpointKind): boolean {
  if (expected === 'ok') return answer.status >= 200 && answer.status < 300;
  if (answer.status !== expected) return false;
  const error = answer.body?.error as Record<string, unknown> | undefined;
  // A refusal in Anthropic's shape on its routes, {type: 'error', error: {type: 'permission_error', message}}.
  if (kind && ANTHROPIC_SHAPED_KINDS.has(kind)) return answer.body?.type === 'error' && error?.type === 'permission_error' && typeof error.message === 'string';
  // Elsewhere in the INTERFACE.md error shape.
  return typeof error?.message === 'string' && typeof error.code === 'string' && typeof error.type === 'string';
}

/** The status and what the answer is (never a whole body: a created key's secret would land in the test output). */
function describeAnswer(answer: Answer): string {
  const error = answer.body?.error as Record<string, unknown> | undefined;
  if (error) return `${answer.status} ${String(error.code)}: ${String(error.message)}`;
  const object = answer.body?.object ?? 'no object';
  return `${answer.status} (${String(object)}${typeof answer.body?.id === 'string' ? ` ${answer.body.id}` : ''})`;
}

/** Every principal calls the row's route at once; the principals whose answer differs from the table. */
async function runRow(world: World, row: MatrixRow): Promise<string[]> {
  const registered = world.gateway.plugins.registry.routes.some(({ route }) => `${route.method} ${route.path}` === row.route);
  if (!registered) return [`${row.route} is not registered (refused plugins: ${JSON.stringify(world.gateway.plugins.refused)})`];
  const fixture = FIXTURES[row.key];
  if (!fixture) return [`no fixture for ${row.key}`];
  const specs = await Promise.all(PRINCIPALS.map((who) => fixture(world, who)));
  const answers = await Promise.all(
    PRINCIPALS.map((who, i) => {
      const spec = specs[i] ?? {};
      return world.call(row.method, fillPath(row.path, spec), spec.body, world.keys[who].secret);
    }),
  );
  return PRINCIPALS.flatMap((who, i) => {
    const answer = answers[i] as Answer;
    const expected = row.expect[who];
    return matches(expected, answer) ? [] : [`${COLUMNS[who]} (${who}): expected ${expected}, got ${describeAnswer(answer)}`];
  });
}

test('every row of the matrix has a fixture and every fixture a row', () => {
  const rows = new Set(MATRIX.map((r) => r.key));
  expect({
    rowsWithoutFixture: [...rows].filter((k) => !(k in FIXTURES)),
    fixturesWithoutRow: Object.keys(FIXTURES).filter((k) => !rows.has(k)),
  }).toEqual({ rowsWithoutFixture: [], fixturesWithoutRow: [] });
});

for (const dialect of E2E_DIALECTS) {
  describe(`RBAC matrix [${dialect}]`, () => {
    let world: World;

    beforeAll(async () => {
      world = await createWorld(dialect);
    }, 60_000);
    afterAll(async () => {
      await world?.close();
    });

    test('every registered administration route has a row; public routes are in the allow-list', () => {
      const registered = world.gateway.plugins.registry.routes.map(({ route }) => ({ key: `${route.method} ${route.path}`, public: route.public === true }));
      const keys = new Set(registered.map((r) => r.key));
      const covered = new Set(MATRIX.map((r) => r.route));
      expect({
        routesWithoutRow: registered.filter((r) => !r.public && !covered.has(r.key)).map((r) => r.key),
        publicRoutesNotAllowed: registered.filter((r) => r.public && !(r.key in PUBLIC_ROUTES)).map((r) => r.key),
        allowedButNotPublic: Object.keys(PUBLIC_ROUTES).filter((k) => !registered.some((r) => r.public && r.key === k)),
        rowsOfUnregisteredRoutes: [...covered].filter((k) => !keys.has(k)),
        rowsOfPublicRoutes: [...covered].filter((k) => k in PUBLIC_ROUTES),
      }).toEqual({ routesWithoutRow: [], publicRoutesNotAllowed: [], allowedButNotPublic: [], rowsOfUnregisteredRoutes: [], rowsOfPublicRoutes: [] });
    });

    test('the principals are who the matrix says: each key authenticates', async () => {
      const answers = await Promise.all(PRINCIPALS.map((who) => world.call('GET', '/workspaces', undefined, world.keys[who].secret)));
      expect(answers.map((a) => a.status)).toEqual(PRINCIPALS.map((who) => (who === 'orgNoScope' ? 403 : 200)));
    });

    for (const row of MATRIX)
      test(row.key, async () => {
        expect(await runRow(world, row)).toEqual([]);
      });

    describe('data plane', () => {
      let plane: DataPlane;
      beforeAll(async () => {
        plane = await createDataPlane(world);
      }, 30_000);
      afterAll(async () => {
        await plane?.close();
      });

      test('every kind of gateway route has a row', () => {
        const kinds = Object.keys(GATEWAY_CALL_SCOPES);
        expect(kinds.filter((kind) => !DATA_PLANE_CALLS.some((call) => call.kind === kind))).toEqual([]);
      });

      for (const { call, expect: expected } of DATA_PLANE_MATRIX)
        test(`${call.key} (gateway call)`, async () => {
          plane.reset();
          const answers = await Promise.all(DATA_PLANE_CALLERS.map((who) => plane.send(call, who)));
          const wrong = DATA_PLANE_CALLERS.flatMap((who, i) => {
            const answer = answers[i] as Answer;
            return matches(expected[who], answer, call.kind) ? [] : [`${who}: expected ${expected[who]}, got ${describeAnswer(answer)}`];
          });
          expect(wrong).toEqual([]);
          // A refused call reaches nothing: the provider server saw the allowed calls only, each with the stored key.
          const allowed = DATA_PLANE_CALLERS.filter((who) => expected[who] === 'ok').length;
          expect(plane.received(call).length).toBe(allowed);
        });

      // Files, batches and fine-tuning (tests/admin/rbac/job-calls.ts): forwarded to a provider that keeps them, or kept
      // by the gateway.
      describe('files, batches and fine-tuning', () => {
        let jobs: JobPlane;
        beforeAll(async () => {
          jobs = await createJobPlane(world, plane);
        }, 30_000);

        test('every job kind has a row forwarded to the provider, and files and batches a row kept by the gateway', () => {
          const kinds = Object.keys(JOB_CALL_SCOPES);
          expect({
            forwarded: kinds.filter((kind) => !JOB_CALLS.some((call) => call.job === kind && !isKept(call))),
            kept: ['files', 'batches'].filter((kind) => !JOB_CALLS.some((call) => call.job === kind && isKept(call))),
          }).toEqual({ forwarded: [], kept: [] });
        });

        for (const { call, expect: expected } of JOB_MATRIX)
          test(`${call.key} (job call)`, async () => {
            jobs.reset();
            const answers = await Promise.all(DATA_PLANE_CALLERS.map((who) => jobs.send(call, who)));
            const wrong = DATA_PLANE_CALLERS.flatMap((who, i) => {
              const answer = answers[i] as Answer;
              return matches(expected[who], answer) ? [] : [`${who}: expected ${expected[who]}, got ${describeAnswer(answer)}`];
            });
            expect(wrong).toEqual([]);
            // Forwarded: the provider server saw the allowed calls only. Kept: no provider server saw anything.
            const allowed = DATA_PLANE_CALLERS.filter((who) => expected[who] === 'ok').length;
            expect(jobs.received().length).toBe(isKept(call) ? 0 : allowed);
          });
      });
    });
  });
}
