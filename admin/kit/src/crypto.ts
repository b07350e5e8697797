/**
 * Credentials at rest (integrations, virtual keys, secret-manager logins): AES-256-GCM under a key from
 * GATEWAY_ENCRYPTION_KEY. Stored form: `v1:<iv>:<ciphertext+tag>` in base64url; a stored value never decrypts
 * under another key. Without GATEWAY_ENCRYPTION_KEY an embedded (SQLite) deployment keeps a generated key in a file
 * beside its database; a MySQL deployment must set it, so that every process decrypts alike.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const VERSION = 'v1';

export class SecretBox {
  private readonly key: Buffer;

  /** Any string of at least 16 characters; it is hashed to the 32-byte key. */
  constructor(material: string) {
    if (material.length < 16) throw new Error('GATEWAY_ENCRYPTION_KEY must be at least 16 characters');
    this.key = createHash('sha256').update(material).digest();
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}:${iv.toString('base64url')}:${body.toString('base64url')}`;
  }

  open(sealed: string): string {
    const [version, iv, body] = sealed.split(':');
    if (version !== VERSION || !iv || !body) throw new Error('not a sealed value');
    const data = Buffer.from(body, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8');
  }

  sealJson(value: unknown): string {
    return this.seal(JSON.stringify(value));
  }

  openJson<T>(sealed: string): T {
    return JSON.parse(this.open(sealed)) as T;
  }
}

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
