/**
 * The prompts and partials a render reads, from memory: the rows of `prompts` and `prompt_partials` (which version
 * is newest, which published) are a StoredSnapshot, reloaded here after a write and in every other process on the
 * state store's channel, as saved configs are. Versions never change once written: each is read once, compiled
 * once, and kept in a bounded cache keyed by its prompt and number.
 */
import { reindex, type StoredIndex, StoredSnapshot } from '@gateway/admin-kit';
import { and, type Caller, type Database, eq, Errors, type Logger, type StateStore } from '@gateway/sdk';
import { type CompiledPrompt, compilePrompt, type PromptDefinition } from './definition.ts';
import type { PartialTexts } from './render.ts';
import { promptPartials, promptPartialVersions, prompts, promptVersions } from './tables.ts';
import { type CompiledTemplate, compile } from './template.ts';

export interface StoredEntry {
  readonly id: string;
  readonly organisationId: string;
  readonly workspaceId: string;
  readonly slug: string;
  readonly version: number;
  readonly publishedVersion: number;
  readonly stamp: string;
}

interface Sets {
  prompts: StoredIndex<StoredEntry>;
  partials: StoredIndex<StoredEntry>;
}

/** `@latest`, `@<n>`, or nothing (the published version). */
export type VersionChoice = 'published' | 'latest' | number;

/** A reference split: `support-bot@3` → `support-bot`, 3. */
export function parseReference(raw: string): { ref: string; choice: VersionChoice } {
  const value = raw.includes('%') ? safeDecode(raw) : raw;
  const at = value.lastIndexOf('@');
  if (at <= 0) return { ref: value, choice: 'published' };
  const ref = value.slice(0, at);
  const suffix = value.slice(at + 1);
  if (suffix === 'latest') return { ref, choice: 'latest' };
  const n = Number(suffix);
  if (!/^[1-9][0-9]{0,8}$/.test(suffix) || !Number.isSafeInteger(n)) throw Errors.badRequest(`A version suffix is @latest or @<version number>, not @${suffix.slice(0, 32)}`, 'promptId');
  return { ref, choice: n };
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export function versionNumber(entry: Pick<StoredEntry, 'version' | 'publishedVersion'>, choice: VersionChoice): number {
  return choice === 'published' ? entry.publishedVersion : choice === 'latest' ? entry.version : choice;
}

export interface LoadedVersion {
  readonly promptId: string;
  readonly version: number;
  readonly definition: PromptDefinition;
  readonly compiled: CompiledPrompt;
}

/** Loaded versions kept (prompt versions and partial versions each); the oldest loaded goes first past it. */
const VERSION_CACHE_MAX = 5000;
/** How deep partials may include partials: a cycle is cut here (and rendering it would never end). */
const MAX_PARTIAL_DEPTH = 10;

class BoundedCache<V> {
  private readonly map = new Map<string, Promise<V>>();
  get(key: string, load: () => Promise<V>): Promise<V> {
    let found = this.map.get(key);
    if (!found) {
      if (this.map.size >= VERSION_CACHE_MAX) this.map.delete(this.map.keys().next().value as string);
      found = load();
      this.map.set(key, found);
      // A failed read (database down) is not kept: the next render tries again.
      found.catch(() => this.map.delete(key));
    }
    return found;
  }
}

export interface PromptStoreOptions {
  database: Database;
  state: StateStore;
  logger?: Logger;
  refreshMs?: number;
}

export class PromptStore {
  private readonly snapshot: StoredSnapshot<Sets>;
  private last: Sets | undefined;
  private readonly versions = new BoundedCache<LoadedVersion>();
  private readonly partialVersions = new BoundedCache<CompiledTemplate>();

  constructor(private readonly o: PromptStoreOptions) {
    this.snapshot = new StoredSnapshot({ name: 'prompts', state: o.state, load: () => this.load(), logger: o.logger, refreshMs: o.refreshMs });
  }

  private async load(): Promise<Sets> {
    const [promptRows, partialRows] = await Promise.all([
      this.o.database.select(prompts, { fresh: true }),
      this.o.database.select(promptPartials, { fresh: true }),
    ]);
    // Every write (makeDefault included) moves updated_at, which reindex's stamp holds.
    const keyed = <R extends { id: string; slug: string; version: number; updated_at: number; organisation_id: string; workspace_id: string; published_version: number }>(
      rows: readonly R[],
      previous: StoredIndex<StoredEntry> | undefined,
    ) =>
      reindex(rows, previous, {
        slugKey: (row) => `${row.workspace_id}\n${row.slug}`,
        build: (row, stamp): StoredEntry => ({
          id: row.id,
          organisationId: row.organisation_id,
          workspaceId: row.workspace_id,
          slug: row.slug,
          version: row.version,
          publishedVersion: row.published_version,
          stamp,
        }),
      });
    this.last = { prompts: keyed(promptRows, this.last?.prompts), partials: keyed(partialRows, this.last?.partials) };
    return this.last;
  }

  start(): Promise<void> {
    return this.snapshot.start();
  }

  stop(): void {
    this.snapshot.stop();
  }

  /** After a write: reload here, then in every other process. */
  changed(): Promise<void> {
    return this.snapshot.changed();
  }

  /** Completed reloads (tests wait on it). */
  get generation(): number {
    return this.snapshot.version;
  }

  /**
   * A prompt by id, or by slug in the caller's workspace. Another organisation's is unknown (404); another
   * workspace's is 403, except for an organisation-service key, which acts for the whole organisation.
   */
  find(ref: string, caller: Caller): StoredEntry {
    const set = this.snapshot.current.prompts;
    const entry = set.byId.get(ref) ?? set.bySlug.get(`${caller.workspaceId}\n${ref}`);
    if (!entry || entry.organisationId !== caller.organisationId) throw Errors.notFound(`No such prompt: ${ref.slice(0, 128)}`);
    if (entry.workspaceId !== caller.workspaceId && caller.keyType !== 'organisation-service')
      throw Errors.forbidden(`The prompt ${JSON.stringify(ref.slice(0, 128))} belongs to another workspace`);
    return entry;
  }

  /** A version of a prompt, compiled (once per version and process). 404 when the prompt has no such version. */
  version(entry: Pick<StoredEntry, 'id'>, n: number): Promise<LoadedVersion> {
    return this.versions.get(`${entry.id}@${n}`, async () => {
      const [row] = await this.o.database.select(promptVersions, { where: (c) => and(eq(c.prompt_id, entry.id), eq(c.version, n)), limit: 1 });
      if (!row) throw Errors.notFound(`The prompt has no version ${n}`);
      const definition = row.definition as PromptDefinition;
      return { promptId: entry.id, version: n, definition, compiled: compilePrompt(definition) };
    });
  }

  /**
   * The published text of every partial the prompt's templates include, and of the partials those include, found
   * by slug in the prompt's workspace. 400 naming a partial that does not exist.
   */
  async partials(prompt: CompiledPrompt, workspaceId: string): Promise<PartialTexts> {
    const names = new Set<string>();
    for (const template of prompt.templates) for (const name of template.partials) names.add(name);
    if (names.size === 0) return { texts: {}, compiled: new Map() };
    const texts: Record<string, string> = Object.create(null);
    const compiled = new Map<string, CompiledTemplate>();
    let pending = [...names];
    for (let depth = 0; pending.length > 0; depth++) {
      if (depth >= MAX_PARTIAL_DEPTH) throw Errors.badRequest(`Partials include each other more than ${MAX_PARTIAL_DEPTH} deep (a cycle?): ${pending.join(', ')}`, 'partials');
      const loaded = await Promise.all(pending.map((name) => this.partial(name, workspaceId)));
      const next: string[] = [];
      pending.forEach((name, i) => {
        const template = loaded[i] as CompiledTemplate;
        texts[name] = template.source;
        compiled.set(name, template);
        for (const inner of template.partials) if (!compiled.has(inner) && !next.includes(inner) && !pending.includes(inner)) next.push(inner);
      });
      pending = next;
    }
    return { texts, compiled };
  }

  private partial(name: string, workspaceId: string): Promise<CompiledTemplate> {
    const entry = this.snapshot.current.partials.bySlug.get(`${workspaceId}\n${name}`);
    if (!entry) return Promise.reject(Errors.badRequest(`The template includes {{> ${name}}}, but the prompt's workspace has no partial ${JSON.stringify(name)}`, 'partials'));
    const n = entry.publishedVersion;
    return this.partialVersions.get(`${entry.id}@${n}`, async () => {
      const [row] = await this.o.database.select(promptPartialVersions, { where: (c) => and(eq(c.partial_id, entry.id), eq(c.version, n)), limit: 1 });
      if (!row) throw Errors.internal(`The partial ${entry.id} has no version ${n}`);
      return compile(row.content);
    });
  }
}
