/**
 * An endless JSON body for the attack tests: `prefix` (an object opened, a string started), then chunks of `a` that
 * never close it, up to `total` bytes, produced only as they are read. `pulled()` says how much the reader took:
 * a gateway that caps what it reads pulls little of it, one that buffers it whole pulls all.
 */
export function endlessJson(prefix: string, total: number, chunk: number): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (sent >= total) return controller.close();
        const part = sent === 0 ? new TextEncoder().encode(prefix) : new Uint8Array(chunk).fill(0x61);
        sent += part.byteLength;
        controller.enqueue(part);
      },
    },
    { highWaterMark: 0 },
  );
  return { body, pulled: () => sent };
}
