import type { ConfigValidator } from '@gateway/sdk';
import { clearConfigCache } from './parse.ts';
import { validateConfig } from './validate.ts';

/** What the host provides as service `configValidator`: plugins reach config validation through it, never by import. */
export const configValidator: ConfigValidator = { validate: validateConfig, clearCache: clearConfigCache };
