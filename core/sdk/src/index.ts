export * from './types.ts';
export * from './errors.ts';
export * from './config.ts';
export * from './provider.ts';
export * from './plugin.ts';
export * from './db.ts';
export * from './param-path.ts';
export * from './embeddings.ts';
