// Run by host-guard.test.ts inside `unshare -rn` (a network namespace that has only loopback), never directly:
// starts the OpenAI mock and the real gateway (its HTTP(S)_PROXY pointing at the local trap), sends calls with
// custom hosts, prints `RESULT <json>`. Even if the guard or the proxy settings failed, no packet could leave.

import { startOpenAIMock } from '../mocks/openai-server.ts';
import { CHAT_BODY, startRobustGateway } from './support.ts';

const probe = Bun.spawnSync(['ip', '-o', 'link', 'show']).stdout.toString();
if (probe.split('\n').some((line) => line.trim() && !/:\s+lo:/.test(line))) {
  console.error(`refusing to run outside a loopback-only network namespace:\n${probe}`);
  process.exit(2);
}

const mock = await startOpenAIMock({ apiKey: null, strictParams: false });
const gw = await startRobustGateway({ TRUSTED_CUSTOM_HOSTS: 'trusted.invalid' });
const statuses: Record<string, [number, string | null]> = {};
try {
  for (const host of ['http://93.184.216.34/v1', 'http://10.0.0.1/v1', 'http://169.254.169.254/', 'http://192.168.1.1', 'http://[fd00::1]', 'http://metadata.google.internal']) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gw.adminKey,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': host,
        authorization: 'Bearer sk-netns',
      },
      body: JSON.stringify(CHAT_BODY),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let code: string | null = null;
    try {
      code = JSON.parse(text)?.error?.code ?? null;
    } catch {}
    statuses[host] = [res.status, code];
  }
  console.log(`RESULT ${JSON.stringify({ statuses, trapSeen: gw.trap.seen, mockRequests: mock.requests.length })}`);
} finally {
  await gw.stop();
  await mock.stop();
}
process.exit(0);
