/**
 * The stored settings of every organisation, read through a per-organisation memory cache: the security and key
 * settings are read on hot paths (every /logs call, every key created), so an organisation's rows are loaded once
 * (one query, all categories and workspaces) and kept until a write drops them. A write here drops them before it
 * answers and announces the organisation on the state store's channel, so every other process sharing the Redis
 * drops its copy too; entries also expire after `ttlMs`, which covers a lost announcement.
 *
 * Implements the `securitySettings` and `organisationSettings` services (admin/kit contracts).
 */
import type { KeySettings, OrganisationSettingsService, SecuritySettings, SecuritySettingsService } from '@gateway/admin-kit';
import { and, type Database, eq, Errors, type Json, type Logger, type StateStore } from '@gateway/sdk';
import { effectiveKeySettings } from './key-settings.ts';
import { effectiveSecurity, type SettingsChange } from './security.ts';
import { effectiveSession, type SessionSettings } from './session.ts';
import { ORGANISATION_LEVEL, organisationSettings, type SettingCategory } from './tables.ts';

export const SETTINGS_CHANNEL = 'changes:organisation-settings';

/** Tries of a write that keeps meeting concurrent writes before it gives up with a 409. */
const WRITE_ATTEMPTS = 8;

type Values = Record<string, Json>;

/** One organisation's stored rows: by category, the organisation's values and each workspace's overrides. */
type OrganisationRows = Map<SettingCategory, { organisation?: Values; workspaces: Map<string, Values> }>;

interface Entry {
  rows: Promise<OrganisationRows>;
  expiresAt: number;
}

export interface SettingsStoreOptions {
  logger?: Pick<Logger, 'warn'>;
  /** How long an organisation's rows stay cached without a change announced; default 60 s. */
  ttlMs?: number;
}

export class SettingsStore implements SecuritySettingsService, OrganisationSettingsService {
  private readonly cache = new Map<string, Entry>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly database: Database,
    private readonly state: StateStore,
    private readonly options: SettingsStoreOptions = {},
  ) {}

  /** Listens for changes made by other processes. */
  start(): void {
    this.unsubscribe ??= this.state.subscribe(SETTINGS_CHANNEL, (organisationId) => this.cache.delete(organisationId));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private rows(organisationId: string): Promise<OrganisationRows> {
    const now = Date.now();
    const cached = this.cache.get(organisationId);
    if (cached && cached.expiresAt > now) return cached.rows;
    const entry: Entry = { rows: this.load(organisationId), expiresAt: now + (this.options.ttlMs ?? 60_000) };
    this.cache.set(organisationId, entry);
    // A failed load is not kept: the next read tries again.
    entry.rows.catch(() => {
      if (this.cache.get(organisationId) === entry) this.cache.delete(organisationId);
    });
    return entry.rows;
  }

  private async load(organisationId: string): Promise<OrganisationRows> {
    // fresh: right after a write the reader replica may still hold the old values.
    const rows = await this.database.select(organisationSettings, { where: (c) => eq(c.organisation_id, organisationId), fresh: true });
    const out: OrganisationRows = new Map();
    for (const row of rows) {
      let category = out.get(row.category);
      if (!category) out.set(row.category, (category = { workspaces: new Map() }));
      if (row.workspace_id === ORGANISATION_LEVEL) category.organisation = row.values;
      else category.workspaces.set(row.workspace_id, row.values);
    }
    return out;
  }

  /** The values stored at one level (the organisation's, or a workspace's overrides); {} when none. */
  async stored(organisationId: string, category: SettingCategory, workspaceId: string | null): Promise<Values> {
    const levels = (await this.rows(organisationId)).get(category);
    const values = workspaceId === null ? levels?.organisation : levels?.workspaces.get(workspaceId);
    return { ...values };
  }

  /**
   * Applies a change to one level's stored values; resolves to the values before and after. A write lands only over
   * the version it read; when another write came between, it reads again and reapplies its change.
   */
  async write(organisationId: string, category: SettingCategory, workspaceId: string | null, change: SettingsChange): Promise<{ before: Values; after: Values }> {
    const level = workspaceId ?? ORGANISATION_LEVEL;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const result = await this.database.transaction(async (tx) => {
        const [row] = await tx.select(organisationSettings, {
          where: (c) => and(eq(c.organisation_id, organisationId), eq(c.workspace_id, level), eq(c.category, category)),
        });
        if (!row) {
          const after = merge({}, change);
          const inserted = await tx.insert(organisationSettings, { organisation_id: organisationId, workspace_id: level, category, values: after }, { ignoreDuplicates: true });
          return inserted === 1 ? { before: {}, after } : undefined; // another writer created it: read again
        }
        const after = merge(row.values, change);
        const matched = await tx.update(
          organisationSettings,
          { values: after, version: row.version + 1, updated_at: Date.now() },
          (c) => and(eq(c.id, row.id), eq(c.version, row.version)),
        );
        return matched === 1 ? { before: row.values, after } : undefined;
      });
      if (result) {
        await this.changed(organisationId);
        return result;
      }
    }
    throw Errors.conflict('The settings were changed by several requests at once; try again');
  }

  /** Drops the organisation's cached rows here and announces the change to other processes. */
  async changed(organisationId: string): Promise<void> {
    this.cache.delete(organisationId);
    await this.state.publish(SETTINGS_CHANNEL, organisationId).catch((error: unknown) => {
      this.options.logger?.warn(
        { error: error instanceof Error ? error.message : String(error) },
        'could not announce a settings change; other processes pick it up when their cache expires',
      );
    });
  }

  /** SecuritySettingsService: the effective security settings of the organisation, or of one of its workspaces. */
  async get(organisationId: string, workspaceId: string | null): Promise<SecuritySettings> {
    const levels = (await this.rows(organisationId)).get('security');
    return effectiveSecurity(levels?.organisation, workspaceId === null ? undefined : levels?.workspaces.get(workspaceId));
  }

  /** OrganisationSettingsService: the effective API-key settings. */
  async keySettings(organisationId: string, workspaceId: string | null): Promise<KeySettings> {
    const levels = (await this.rows(organisationId)).get('api_keys');
    return effectiveKeySettings(levels?.organisation, workspaceId === null ? undefined : levels?.workspaces.get(workspaceId));
  }

  /** The organisation's session settings (service `sessionSettings`, for the SSO login to come). */
  async session(organisationId: string): Promise<SessionSettings> {
    return effectiveSession((await this.rows(organisationId)).get('session')?.organisation);
  }
}

function merge(values: Readonly<Values>, change: SettingsChange): Values {
  const out: Values = { ...values, ...change.set };
  for (const key of change.remove) delete out[key];
  return out;
}

