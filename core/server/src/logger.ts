import pino from 'pino';

/** Paths pino blanks out wherever they appear: provider keys, gateway keys, authorization headers. */
export const REDACTED_PATHS = [
  'api_key',
  '*.api_key',
  'apiKey',
  '*.apiKey',
  'secret',
  '*.secret',
  'authorization',
  '*.authorization',
  'Authorization',
  '*.Authorization',
  'headers.authorization',
  'headers["x-gateway-api-key"]',
  '*.headers.authorization',
  '*.headers["x-gateway-api-key"]',
  'svcA_secret_access_key',
  '*.svcA_secret_access_key',
  'svcA_session_token',
  '*.svcA_session_token',
  'svcC_service_account_json',
  '*.svcC_service_account_json',
  'svcB_entra_client_secret',
  '*.svcB_entra_client_secret',
];

export function createLogger(level: string, destination?: pino.DestinationStream): pino.Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'gateway' } }, destination);
}
