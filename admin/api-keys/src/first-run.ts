/**
 * What the first start prints, as plain text on stdout (never inside a JSON log line): the admin key when it was
 * generated, a first call to make, where the documentation is, and how to replace a lost key.
 */
export interface FirstRunOptions {
  /** The generated secret; undefined when GATEWAY_ADMIN_API_KEY chose it (not printed again). */
  secret?: string;
  /** The address a client on this machine uses, e.g. http://localhost:8787. */
  baseUrl: string;
}

export function firstRunBanner({ secret, baseUrl }: FirstRunOptions): string {
  const key = secret
    ? ['Admin API key (shown once, stored only hashed: keep it now):', '', `    ${secret}`, '']
    : ['Admin API key: the value of GATEWAY_ADMIN_API_KEY.', ''];
  return [
    '',
    '================================ Gateway: first start ================================',
    '',
    ...key,
    'Next steps:',
    '',
    '  1. Make a first call (with your OpenAI key in OPENAI_API_KEY):',
    '',
    `     export GATEWAY_KEY=${secret ?? '"$GATEWAY_ADMIN_API_KEY"'}`,
    `     curl ${baseUrl}/v1/chat/completions \\`,
    '       -H "x-gateway-api-key: $GATEWAY_KEY" -H "x-gateway-provider: openai" \\',
    '       -H "Authorization: Bearer $OPENAI_API_KEY" -H "content-type: application/json" \\',
    `       -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}'`,
    '',
    '  2. Read the docs: README.md ("First five minutes") and docs/ in the gateway\'s directory.',
    '',
    'Lost the key? `npm run admin -- create-key` stores a new one and prints it once.',
    '======================================================================================',
    '',
  ].join('\n');
}

/** The address of a server listening on `host`:`port` as a client on the same machine writes it. */
export function localBaseUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  // PORT=0: the system chooses; the "gateway listening" line below gives it.
  return `http://${name}:${port === 0 ? '<port>' : port}`;
}
