/** Keeps the first `limit` bytes of a stream as text for the log, without holding the whole answer. */
export class Capture {
  private readonly parts: Uint8Array[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  add(chunk: Uint8Array): void {
    if (this.size >= this.limit) {
      this.truncated = true;
      return;
    }
    const room = this.limit - this.size;
    const part = chunk.byteLength > room ? chunk.subarray(0, room) : chunk;
    if (part !== chunk) this.truncated = true;
    this.parts.push(part);
    this.size += part.byteLength;
  }

  text(): string {
    return Buffer.concat(this.parts).toString('utf8');
  }
}
