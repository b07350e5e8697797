/**
 * Service `secretReferences` (SecretResolver): checks mappings when an integration or virtual key is written, and
 * reads the mapped secrets at request time. References are held in memory (a StoredSnapshot reloaded on change, in
 * every process); fetched secrets are kept in this process only, for `cacheTtlMs` (SECRET_REFERENCES_CACHE_TTL_MS,
 * default 30 s), so a rotated secret is picked up within that time; concurrent misses share one fetch.
 */
import { type SecretBox, type SecretMapping, type SecretResolver, StoredSnapshot } from '@gateway/admin-kit';
import { type Database, Errors, GatewayError, type OutboundGuard, type Json, type Logger, type StateStore } from '@gateway/sdk';
import { TtlCache } from './cache.ts';
import { type FetchedSecret, ManagerClients } from './clients/index.ts';
import { ManagerFailure, secretManagerError } from './errors.ts';
import { pick } from './extract.ts';
import { allows, findReference, openAuth } from './store.ts';
import { type SecretReferenceRow, secretReferences } from './tables.ts';

export const DEFAULT_CACHE_TTL_MS = 30_000;
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface SecretReferenceServiceOptions {
  database: Database;
  box: SecretBox;
  state: StateStore;
  hostGuard?: OutboundGuard;
  logger?: Logger;
  cacheTtlMs?: number;
  /** Deadline of one call to a manager. */
  timeoutMs?: number;
  /** Periodic reload of the references (ms; 0: only on change). */
  refreshMs?: number;
}

interface Index {
  byId: Map<string, SecretReferenceRow>;
  /** `<organisation id>\n<slug>`. */
  bySlug: Map<string, SecretReferenceRow>;
}

const FORMATS = new Set(['string', 'json']);

export class SecretReferenceService implements SecretResolver {
  private readonly snapshot: StoredSnapshot<Index>;
  private readonly values = new TtlCache<FetchedSecret>();
  private readonly clients: ManagerClients;
  private readonly cacheTtlMs: number;

  constructor(private readonly o: SecretReferenceServiceOptions) {
    this.cacheTtlMs = o.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
    this.clients = new ManagerClients({ hostGuard: o.hostGuard, timeoutMs: o.timeoutMs ?? DEFAULT_TIMEOUT_MS });
    this.snapshot = new StoredSnapshot<Index>({
      name: 'secret-references',
      state: o.state,
      logger: o.logger,
      refreshMs: o.refreshMs,
      load: async () => {
        const rows = await o.database.select(secretReferences, { fresh: true });
        return {
          byId: new Map(rows.map((r) => [r.id, r])),
          bySlug: new Map(rows.map((r) => [`${r.organisation_id}\n${r.slug}`, r])),
        };
      },
    });
  }

  start(): Promise<void> {
    return this.snapshot.start();
  }

  stop(): void {
    this.snapshot.stop();
  }

  /** After a write: forget the reference's fetched secret here, reload the set and tell the other processes. */
  async changed(id: string): Promise<void> {
    this.values.deletePrefix(`${id}@`);
    await this.snapshot.changed();
  }

  async check(organisationId: string, workspaceIds: readonly string[] | 'all', mappings: readonly SecretMapping[]): Promise<void> {
    validateMappings(mappings);
    for (const [i, mapping] of mappings.entries()) {
      const param = `secret_mappings[${i}].secret_reference_id`;
      // Read from the writer: a reference created a moment ago in another process counts.
      const ref = await findReference(this.o.database, organisationId, mapping.secret_reference_id, { fresh: true });
      if (!ref) throw Errors.badRequest(`Unknown secret reference ${mapping.secret_reference_id}`, param);
      if (workspaceIds === 'all') {
        if (!ref.allow_all_workspaces)
          throw Errors.forbidden(`Secret reference ${ref.slug} is not available to every workspace (allow_all_workspaces is false)`);
        continue;
      }
      const refused = workspaceIds.find((ws) => !allows(ref, ws));
      if (refused) throw Errors.forbidden(`Secret reference ${ref.slug} is not available to workspace ${refused}`);
    }
  }

  async resolve(organisationId: string, workspaceId: string, mappings: readonly SecretMapping[]): Promise<Record<string, Json>> {
    const refs: SecretReferenceRow[] = [];
    for (const [i, mapping] of mappings.entries()) {
      const ref = await this.lookup(organisationId, mapping.secret_reference_id);
      if (!ref) throw Errors.badRequest(`Unknown secret reference ${mapping.secret_reference_id}`, `secret_mappings[${i}].secret_reference_id`);
      if (!allows(ref, workspaceId)) throw Errors.forbidden(`Secret reference ${ref.slug} is not available to this workspace`);
      refs.push(ref);
    }
    const fetches = new Map<string, Promise<FetchedSecret>>();
    for (const ref of refs) if (!fetches.has(ref.id)) fetches.set(ref.id, this.fetch(ref));
    // Every fetch settles before the first failure is thrown: no rejection is left unhandled.
    await Promise.allSettled(fetches.values());
    const out: Record<string, Json> = {};
    for (const [i, mapping] of mappings.entries()) {
      const ref = refs[i] as SecretReferenceRow;
      const secret = await (fetches.get(ref.id) as Promise<FetchedSecret>);
      try {
        out[mapping.target_field] = pick(secret, mapping.secret_key ?? ref.secret_key, mapping.value_format ?? 'string');
      } catch (error) {
        if (error instanceof ManagerFailure) throw secretManagerError(ref.slug, error.detail, false);
        throw error;
      }
    }
    return out;
  }

  private async lookup(organisationId: string, idOrSlug: string): Promise<SecretReferenceRow | undefined> {
    const index = this.snapshot.current;
    const hit = index.byId.get(idOrSlug) ?? index.bySlug.get(`${organisationId}\n${idOrSlug}`);
    if (hit) return hit.organisation_id === organisationId ? hit : undefined;
    // Created in another process a moment ago, before its announcement arrived.
    const row = await findReference(this.o.database, organisationId, idOrSlug, { fresh: true });
    if (row) void this.snapshot.reload();
    return row;
  }

  private fetch(ref: SecretReferenceRow): Promise<FetchedSecret> {
    return this.values.get(
      `${ref.id}@${ref.updated_at}`,
      async () => {
        try {
          return await this.clients.fetch(ref.manager_type, openAuth(this.o.box, ref), ref.secret_path);
        } catch (error) {
          if (!(error instanceof ManagerFailure)) throw error instanceof GatewayError ? error : Errors.internal('secret reference read failed', error);
          this.o.logger?.warn({ secret_reference_id: ref.id, manager_type: ref.manager_type, detail: error.detail }, 'could not read a secret from its manager');
          throw secretManagerError(ref.slug, error.detail, error.retryable);
        }
      },
      this.cacheTtlMs,
    );
  }
}

/** The shape of mappings, for check(): 400 naming the field. */
function validateMappings(mappings: readonly SecretMapping[]): void {
  if (!Array.isArray(mappings)) throw Errors.badRequest('secret_mappings must be a list', 'secret_mappings');
  const targets = new Set<string>();
  for (const [i, m] of mappings.entries()) {
    const at = `secret_mappings[${i}]`;
    if (m === null || typeof m !== 'object') throw Errors.badRequest(`${at} must be an object`, at);
    if (typeof m.target_field !== 'string' || !/^[^.\s]+(\.[^.\s]+)*$/.test(m.target_field))
      throw Errors.badRequest(`${at}.target_field must be a field path (dots for nesting)`, `${at}.target_field`);
    if (targets.has(m.target_field)) throw Errors.badRequest(`${at}.target_field ${m.target_field} is mapped twice`, `${at}.target_field`);
    targets.add(m.target_field);
    if (typeof m.secret_reference_id !== 'string' || !m.secret_reference_id)
      throw Errors.badRequest(`${at}.secret_reference_id must be a secret reference id`, `${at}.secret_reference_id`);
    if (m.secret_key !== undefined && m.secret_key !== null && (typeof m.secret_key !== 'string' || !m.secret_key))
      throw Errors.badRequest(`${at}.secret_key must be a non-empty string`, `${at}.secret_key`);
    if (m.value_format !== undefined && !FORMATS.has(m.value_format))
      throw Errors.badRequest(`${at}.value_format must be string or json`, `${at}.value_format`);
  }
}
