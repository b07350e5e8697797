/** API-key secrets: generated, hashed for storage and lookup, hinted for display. */

/** SHA-256 hex: what `api_keys.hash` stores and what a presented key is looked up by. */
export function hashSecret(secret: string): string {
  return new Bun.CryptoHasher('sha256').update(secret).digest('hex');
}

/** `prefix` + 40 URL-safe random characters (30 random bytes, 240 bits). */
export function generateSecret(prefix = ''): string {
  return prefix + Buffer.from(crypto.getRandomValues(new Uint8Array(30))).toString('base64url');
}

/** The prefix and a few characters, never more than a quarter of the secret. */
export function prefixHint(secret: string, prefix = ''): string {
  return secret.slice(0, Math.min(prefix.length + 4, Math.floor(secret.length / 4), 32));
}
