/**
 * Where the gateway keeps file contents: a local directory (FILES_DIR, default ./data/files), one folder per
 * workspace, one file per id; or an S3-compatible bucket (s3-file-store.ts). The database row (tables.ts) is the file
 * object; this is only its bytes.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

export const DEFAULT_FILES_DIR = './data/files';

/** Ids and workspace ids become path parts: only these characters, so no id reaches outside the directory. */
const SAFE = /^[A-Za-z0-9_-]{1,64}$/;

export function part(value: string): string {
  if (!SAFE.test(value)) throw new Error(`unsafe file store name: ${JSON.stringify(value.slice(0, 80))}`);
  return value;
}

/** The bytes of the gateway's files, by workspace and id. */
export interface FileStore {
  put(workspaceId: string, id: string, bytes: Uint8Array | string): Promise<void>;
  get(workspaceId: string, id: string): Promise<Uint8Array>;
  delete(workspaceId: string, id: string): Promise<void>;
}

export class LocalFileStore implements FileStore {
  readonly dir: string;

  constructor(dir: string | undefined) {
    this.dir = resolve(dir?.trim() || DEFAULT_FILES_DIR);
  }

  private path(workspaceId: string, id: string): string {
    return join(this.dir, part(workspaceId), part(id));
  }

  async put(workspaceId: string, id: string, bytes: Uint8Array | string): Promise<void> {
    await mkdir(join(this.dir, part(workspaceId)), { recursive: true });
    // Written under a temporary name and renamed: a reader never sees half a file.
    const target = this.path(workspaceId, id);
    const temporary = `${target}.${crypto.randomUUID()}.tmp`;
    await writeFile(temporary, bytes);
    await rename(temporary, target);
  }

  async get(workspaceId: string, id: string): Promise<Uint8Array> {
    return new Uint8Array(await readFile(this.path(workspaceId, id)));
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    await rm(this.path(workspaceId, id), { force: true });
  }
}
