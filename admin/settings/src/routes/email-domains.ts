/**
 * /email-domains: the domains an organisation claims (owners and admins). Domains are stored lower case, unique per
 * organisation; a subdomain of another registered domain cannot set allow_subdomains (domains.ts).
 */
import { conflictOnUnique, iso, json, list, noContent, page, validator } from '@gateway/admin-kit';
import { type AdminRoute, and, asc, type Database, eq, Errors, or, type Row, type TransactionHelpers, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { normaliseDomain, subdomainConflict } from '../domains.ts';
import { emailDomains } from '../tables.ts';
import type { RouteDeps } from './deps.ts';

type DomainRow = Row<typeof emailDomains>;

const checkCreate = validator(
  Type.Object({ domain: Type.String({ maxLength: 300 }), allow_subdomains: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
);
const checkUpdate = validator(
  Type.Object({ domain: Type.Optional(Type.String({ maxLength: 300 })), allow_subdomains: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
);

export function presentDomain(row: DomainRow) {
  return {
    object: 'email_domain',
    id: row.id,
    domain: row.domain,
    allow_subdomains: row.allow_subdomains,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function domainField(raw: string): string {
  const domain = normaliseDomain(raw);
  if (!domain) throw Errors.badRequest(`domain must be a valid domain name such as example.com (got "${raw.slice(0, 100)}")`, 'domain');
  return domain;
}

/** The organisation's domain by id or by name; 404 otherwise. */
async function findDomain(database: Pick<TransactionHelpers, 'select'>, organisationId: string, idOrDomain: string): Promise<DomainRow> {
  const name = idOrDomain.toLowerCase();
  const rows =
    idOrDomain && idOrDomain.length <= 253
      ? await database.select(emailDomains, {
          where: (c) => and(eq(c.organisation_id, organisationId), or(eq(c.id, idOrDomain), eq(c.domain, name))),
          limit: 2,
          fresh: true,
        })
      : [];
  const row = rows.find((r) => r.id === idOrDomain) ?? rows[0];
  if (!row) throw Errors.notFound('No such email domain');
  return row;
}

/** 409 when the name is taken, 400 when the subdomain rule refuses it. */
async function checkAgainstOthers(tx: Pick<TransactionHelpers, 'select'>, organisationId: string, candidate: { id?: string; domain: string; allow_subdomains: boolean }): Promise<void> {
  const others = (await tx.select(emailDomains, { where: (c) => eq(c.organisation_id, organisationId) })).filter((r) => r.id !== candidate.id);
  if (others.some((r) => r.domain === candidate.domain)) throw Errors.conflict(`${candidate.domain} is already registered by this organisation`, 'domain');
  const conflict = subdomainConflict(candidate, others);
  if (conflict) throw Errors.badRequest(conflict.message, conflict.param);
}

/** A write that a concurrent registration of the same name may beat: 409 as the pre-check would say. */
const unique = <T>(domain: string, write: () => Promise<T>): Promise<T> =>
  conflictOnUnique(write, () => Errors.conflict(`${domain} is already registered by this organisation`, 'domain'));

export function emailDomainRoutes({ database }: Pick<RouteDeps, 'database'>): AdminRoute[] {
  const db: Database = database;
  return [
    {
      method: 'GET',
      path: '/email-domains',
      scope: 'email_domains.read',
      role: 'admin',
      async handle(req) {
        const p = page(req.query);
        const where: Where<(typeof emailDomains)['columns']> = (c) => eq(c.organisation_id, req.caller.organisationId);
        const [total, rows] = await Promise.all([
          db.count(emailDomains, where),
          db.select(emailDomains, { where, orderBy: (c) => [asc(c.domain)], limit: p.limit, offset: p.offset }),
        ]);
        return list(rows.map(presentDomain), total);
      },
    },
    {
      method: 'POST',
      path: '/email-domains',
      scope: 'email_domains.write',
      role: 'admin',
      async handle(req) {
        const body = checkCreate(req.body);
        const organisationId = req.caller.organisationId;
        const candidate = { domain: domainField(body.domain), allow_subdomains: body.allow_subdomains ?? false };
        const row = await unique(candidate.domain, () =>
          db.transaction(async (tx) => {
            await checkAgainstOthers(tx, organisationId, candidate);
            const now = Date.now();
            const created: DomainRow = { id: crypto.randomUUID(), organisation_id: organisationId, ...candidate, created_at: now, updated_at: now };
            await tx.insert(emailDomains, created);
            return created;
          }),
        );
        req.audit = { resource: 'email_domain', resourceId: row.id, action: 'create', workspaceId: null, after: presentDomain(row) };
        return json(presentDomain(row), 201);
      },
    },
    {
      method: 'GET',
      path: '/email-domains/:emailDomainId',
      scope: 'email_domains.read',
      role: 'admin',
      handle: async (req) => json(presentDomain(await findDomain(db, req.caller.organisationId, req.params.emailDomainId ?? ''))),
    },
    {
      method: 'PUT',
      path: '/email-domains/:emailDomainId',
      scope: 'email_domains.write',
      role: 'admin',
      async handle(req) {
        const organisationId = req.caller.organisationId;
        const existing = await findDomain(db, organisationId, req.params.emailDomainId ?? '');
        const body = checkUpdate(req.body);
        const domain = body.domain === undefined ? existing.domain : domainField(body.domain);
        const { before, after } = await unique(domain, () =>
          db.transaction(async (tx) => {
            const current = await findDomain(tx, organisationId, existing.id); // as of this transaction
            const next: DomainRow = { ...current, domain, allow_subdomains: body.allow_subdomains ?? current.allow_subdomains, updated_at: Date.now() };
            await checkAgainstOthers(tx, organisationId, next);
            await tx.update(emailDomains, { domain: next.domain, allow_subdomains: next.allow_subdomains, updated_at: next.updated_at }, (c) => eq(c.id, current.id));
            return { before: current, after: next };
          }),
        );
        req.audit = { resource: 'email_domain', resourceId: after.id, action: 'update', workspaceId: null, before: presentDomain(before), after: presentDomain(after) };
        return json(presentDomain(after));
      },
    },
    {
      method: 'DELETE',
      path: '/email-domains/:emailDomainId',
      scope: 'email_domains.write',
      role: 'admin',
      async handle(req) {
        const existing = await findDomain(db, req.caller.organisationId, req.params.emailDomainId ?? '');
        await db.delete(emailDomains, (c) => and(eq(c.organisation_id, req.caller.organisationId), eq(c.id, existing.id)));
        req.audit = { resource: 'email_domain', resourceId: existing.id, action: 'delete', workspaceId: null, before: presentDomain(existing) };
        return noContent();
      },
    },
  ];
}
