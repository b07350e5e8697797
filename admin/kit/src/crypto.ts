/**
 * Credentials at rest (integrations, virtual keys, secret-manager logins, saved configs' and guardrails' secrets,
 * pending API-key secrets): AES-256-GCM under a key from GATEWAY_ENCRYPTION_KEY. A stored value never decrypts under
 * another key, nor in another place: its row's table, id and column are the associated data (`table:id:field`), so
 * a value copied into another row or column (by a bug, or by someone who can write one row of the database) does not
 * open there.
 *
 * Stored form: `v2:<iv>:<ciphertext+tag>` in base64url, bound to its place. `v1:` values (written before binding) have
 * no associated data: they still open, and `rebindSealed` (sealed-rebind.ts) rewrites them bound at start.
 *
 * Without GATEWAY_ENCRYPTION_KEY an embedded (SQLite) deployment keeps a generated key in a file beside its database;
 * a MySQL deployment must set it, so that every process decrypts alike.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Bound to its place (associated data `table:id:field`). */
const BOUND = 'v2';
/** Written before binding: no associated data. */
const UNBOUND = 'v1';

/** Where a sealed value is stored: the row's table and id, and the column. */
export interface SealedAt {
  readonly table: string;
  readonly id: string;
  readonly field: string;
}

const associatedData = (at: SealedAt): Buffer => Buffer.from(`${at.table}:${at.id}:${at.field}`, 'utf8');

/** A stored value that does not open: another key, another place, or damaged. Its message never holds the value. */
export class SealedValueError extends Error {
  constructor(at: SealedAt, why: string) {
    super(`The sealed ${at.table}.${at.field} of ${at.id} cannot be opened (${why})`);
    this.name = 'SealedValueError';
  }
}

export class SecretBox {
  private readonly key: Buffer;

  /** Any string of at least 16 characters; it is hashed to the 32-byte key. */
  constructor(material: string) {
    if (material.length < 16) throw new Error('GATEWAY_ENCRYPTION_KEY must be at least 16 characters');
    this.key = createHash('sha256').update(material).digest();
  }

  /** Seals `plain` for one place: it opens only with the same `at`. The row's id must be chosen before this. */
  seal(plain: string, at: SealedAt): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(associatedData(at));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${BOUND}:${iv.toString('base64url')}:${body.toString('base64url')}`;
  }

  /** Throws SealedValueError when the value was sealed under another key or for another place, or was altered. */
  open(sealed: string, at: SealedAt): string {
    const [version, iv, body] = sealed.split(':');
    if ((version !== BOUND && version !== UNBOUND) || !iv || !body) throw new SealedValueError(at, 'not a sealed value');
    try {
      const data = Buffer.from(body, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      if (version === BOUND) decipher.setAAD(associatedData(at));
      decipher.setAuthTag(data.subarray(data.length - 16));
      return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      throw new SealedValueError(at, 'another GATEWAY_ENCRYPTION_KEY, a value sealed for another row or field, or a damaged value');
    }
  }

  sealJson(value: unknown, at: SealedAt): string {
    return this.seal(JSON.stringify(value), at);
  }

  openJson<T>(sealed: string, at: SealedAt): T {
    return JSON.parse(this.open(sealed, at)) as T;
  }

  /** Sealed before values were bound to their place (`rebindSealed` rewrites such values). */
  static isUnbound(sealed: string): boolean {
    return sealed.startsWith(`${UNBOUND}:`);
  }
}

/** The prefix of values sealed before binding, for a query that finds them (`LIKE 'v1:%'`). */
export const UNBOUND_PREFIX = `${UNBOUND}:`;

const boxes = new Map<string, SecretBox>();

/** The box of this deployment, from the environment (see the file comment). */
export function secretBoxFromEnv(env: Readonly<Record<string, string | undefined>>): SecretBox {
  const material = env.GATEWAY_ENCRYPTION_KEY || keyFileMaterial(env.DATABASE_URL || 'sqlite:./data/gateway.db');
  let box = boxes.get(material);
  if (!box) boxes.set(material, (box = new SecretBox(material)));
  return box;
}

function keyFileMaterial(databaseUrl: string): string {
  if (!databaseUrl.startsWith('sqlite:')) throw new Error('Set GATEWAY_ENCRYPTION_KEY: a MySQL deployment shares one encryption key across its processes');
  const path = databaseUrl.slice('sqlite:'.length);
  // An in-memory database lives as long as the process: so may its key.
  if (path === ':memory:' || path === '') return (inMemoryKey ??= randomBytes(32).toString('base64url'));
  const file = resolve(dirname(resolve(path)), 'encryption.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dirname(file), { recursive: true });
  const material = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, material, { flag: 'wx', mode: 0o600 });
  } catch {
    return readFileSync(file, 'utf8').trim(); // another process wrote it first
  }
  chmodSync(file, 0o600);
  return material;
}

let inMemoryKey: string | undefined;
