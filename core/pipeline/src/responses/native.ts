/**
 * Reads a native provider's Responses answer as it passes to the client, to keep the Response it produced: a whole
 * JSON answer, or the `response` of a stream's response.completed / response.incomplete event. The bytes reach the
 * client unchanged; the event that ends a stream is held until the Response is kept (a retrieve right after finds it).
 */
import type { JsonObject } from '@gateway/sdk';
import { isObject } from './request.ts';

const FINAL = /"type"\s*:\s*"response\.(completed|incomplete)"/;

export class NativeResponseWatch {
  private kept = false;

  constructor(private readonly keep: (response: JsonObject) => Promise<void>) {}

  wrap(response: Response): Response {
    const body = response.body;
    if (!body) return response;
    const sse = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    return new Response(sse ? this.events(body) : this.whole(body), { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  private async save(text: string): Promise<void> {
    if (this.kept) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    const response = isObject(value) && value.object === 'response' ? value : isObject(value) && isObject(value.response) ? value.response : undefined;
    if (!response) return;
    this.kept = true;
    await this.keep(response);
  }

  /** A JSON answer: collected whole, kept, then sent. */
  private whole(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    const parts: Uint8Array[] = [];
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const { done, value } = await reader.read();
        if (!done) {
          parts.push(value);
          return;
        }
        const bytes = Buffer.concat(parts);
        await this.save(bytes.toString('utf8'));
        if (bytes.byteLength) controller.enqueue(new Uint8Array(bytes));
        controller.close();
      },
      cancel: (reason) => reader.cancel(reason),
    });
  }

  /** An event stream: passed on chunk by chunk; the chunk ending the final event waits until it is kept. */
  private events(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let pending = '';
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        if (!this.kept) {
          pending += decoder.decode(value, { stream: true }).replace(/\r/g, '');
          let end = pending.indexOf('\n\n');
          while (end >= 0) {
            const event = pending.slice(0, end);
            pending = pending.slice(end + 2);
            if (FINAL.test(event)) {
              const data = event
                .split('\n')
                .filter((line) => line.startsWith('data:'))
                .map((line) => line.slice(line.charCodeAt(5) === 32 ? 6 : 5))
                .join('\n');
              await this.save(data);
            }
            end = pending.indexOf('\n\n');
          }
        }
        controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
  }
}
