export { createDatabase, createDatabaseFromEnv, migrate, type CreateDatabaseOptions } from './database.ts';
export { DEFAULT_DATABASE_URL, hadrFromEnv, parseDatabaseUrl, readerFromEnv, type DatabaseTarget, type ReaderOptions } from './url.ts';
export { statementsOf } from './migrate.ts';
export { databaseThreads, openDatabase } from './threads.ts';
export type { Database, Migration } from '@gateway/sdk';
export { isConnectionError, writerUnavailableIn, WriterHealth, type WriterHealthOptions } from './writer-health.ts';
