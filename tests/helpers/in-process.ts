import { createGateway, type Gateway } from '@gateway/server';
import { ROOT } from './gateway-process.ts';

// At least 32 characters: the gateway refuses a shorter GATEWAY_ADMIN_API_KEY.
export const TEST_ADMIN_KEY = 'gw-test-admin-key-0123456789abcdef';

/** What tests trust so that the gateway may call their local provider servers. */
export const LOOPBACK_HOSTS = 'localhost,127.0.0.1,::1';

/** A gateway in this process on an in-memory SQLite database, for tests that call `gateway.handle()`. */
export async function startInProcessGateway(env: Record<string, string | undefined> = {}, roots: string[] = [ROOT]): Promise<Gateway> {
  return createGateway({
    env: {
      DATABASE_URL: 'sqlite::memory:',
      GATEWAY_ADMIN_API_KEY: TEST_ADMIN_KEY,
      LOG_LEVEL: 'silent',
      GATEWAY_ENCRYPTION_KEY: 'gateway-test-encryption-key',
      // Local provider servers listen on loopback, which the gateway no longer trusts by default.
      TRUSTED_CUSTOM_HOSTS: LOOPBACK_HOSTS,
      ...env,
    },
    roots,
  });
}

/** Headers of a gateway call through the openai provider at a local server. */
export function providerHeaders(customHost: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-gateway-api-key': TEST_ADMIN_KEY,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': customHost,
    authorization: 'Bearer sk-test',
    ...extra,
  };
}
