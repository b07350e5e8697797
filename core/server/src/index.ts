export { createGateway, CORE_VERSION, PROJECT_ROOT, type Gateway, type GatewayOptions } from './app.ts';
export { readSettings, type Settings } from './env.ts';
export { createLogger, isSecretKey, redactDeep } from './logger.ts';
export { serve } from './serve.ts';
