/**
 * A provider's answer read no further than a limit: the body is counted as it is read, and past the limit the read
 * fails with a 502 and the rest of the upstream body is cancelled. For answers the gateway reads whole itself (a
 * translated batch's or fine-tuning job's), whose upstream a caller may choose with a custom host: an endless answer
 * must not make the gateway hold all of it.
 */
import { Errors } from '@gateway/sdk';

export function cappedAnswer(response: Response, limit: number, provider: string): Response {
  const body = response.body;
  if (!body) return response;
  const reader = body.getReader();
  let seen = 0;
  const capped = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        seen += value.byteLength;
        if (seen > limit) {
          await reader.cancel().catch(() => undefined);
          controller.error(Errors.upstreamInvalid(provider, `its answer passed ${limit} bytes (FILES_MAX_BYTES) and was not read further`));
          return;
        }
        controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return new Response(capped, { status: response.status, statusText: response.statusText, headers: response.headers });
}
