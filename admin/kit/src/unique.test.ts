import { beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { col, defineTable, Errors, GatewayError } from '@gateway/sdk';
import { writeWithSlug } from './slug.ts';
import { conflictOnUnique, isUniqueViolation } from './unique.ts';

const things = defineTable('kit_unique_things', { id: col.id(), slug: col.string(64) }, { indexes: [{ columns: ['slug'], unique: true }] });

for (const dialect of DIALECTS) {
  describe(`unique violations [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    beforeAll(() => t.database.migrate([{ id: 'kit-test/0001', tables: [things] }]));

    test('a duplicate unique key and a duplicate primary key are recognised; other errors are not', async () => {
      const id = crypto.randomUUID();
      await t.database.insert(things, { id, slug: `s-${id.slice(0, 8)}` });
      const byIndex = await t.database.insert(things, { id: crypto.randomUUID(), slug: `s-${id.slice(0, 8)}` }).catch((e: unknown) => e);
      const byKey = await t.database.insert(things, { id, slug: `t-${id.slice(0, 8)}` }).catch((e: unknown) => e);
      expect(isUniqueViolation(byIndex)).toBe(true);
      expect(isUniqueViolation(byKey)).toBe(true);
      expect(isUniqueViolation(new Error('connection lost'))).toBe(false);
      const conflict = await conflictOnUnique(() => t.database.insert(things, { id, slug: 'x1' }), () => Errors.conflict('taken', 'slug')).catch((e: unknown) => e);
      expect(conflict).toBeInstanceOf(GatewayError);
      expect((conflict as GatewayError).status).toBe(409);
    });

    test('writeWithSlug: a generated slug that loses a race is generated again; a given one that is taken is a 409', async () => {
      await t.database.insert(things, { id: crypto.randomUUID(), slug: 'taken' });
      const tried: string[] = [];
      const slug = await writeWithSlug(undefined, 'Race', async (s) => {
        tried.push(s);
        await t.database.insert(things, { id: crypto.randomUUID(), slug: tried.length === 1 ? 'taken' : s });
        return s;
      }, () => Errors.conflict('never', 'slug'));
      expect(tried).toHaveLength(2);
      expect(slug).toMatch(/^race-[0-9a-f]{8}$/);
      const given = await writeWithSlug('taken', 'x', (s) => t.database.insert(things, { id: crypto.randomUUID(), slug: s }), (s) => Errors.conflict(`${s} is taken`, 'slug')).catch((e: unknown) => e);
      expect((given as GatewayError).message).toBe('taken is taken');
    });
  });
}
