/**
 * A trace id for a call that came without `x-gateway-trace-id`. Time-ordered (UUIDv7): the request log's `trace_id`
 * index then grows at its end like the primary key's, instead of taking each insert on a random page, which once the
 * table outgrows the database's cache (MariaDB's buffer pool, SQLite's page cache) costs a disk read a row
 * (docs/performance.md, the MariaDB soak). Still a UUID, as clients may expect.
 */
export function newTraceId(): string {
  return Bun.randomUUIDv7();
}
