/**
 * Usage for every OpenAI-format stream: a provider that honours `stream_options.include_usage` (its stream translator
 * says `requestsUsage`) is asked for it when the client did not ask, so that the tokens limits, the cost and the log
 * know what the stream consumed; the stream processor then hides what the option adds (streams/hidden-usage.ts).
 */
import type { EndpointTranslator, JsonObject } from '@gateway/sdk';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether the client asked for the usage chunk itself. */
export function clientAskedUsage(body: JsonObject): boolean {
  return isObject(body.stream_options) && body.stream_options.include_usage === true;
}

/** Whether the gateway asks the provider for usage on this call (and hides it from the client). */
export function asksUsageForClient(translator: EndpointTranslator, body: JsonObject): boolean {
  return translator.stream?.requestsUsage === true && !translator.stream.toChunks && body.stream === true && !clientAskedUsage(body);
}

const OPTION = new TextEncoder().encode('"stream_options":{"include_usage":true},');

/**
 * The body with `stream_options.include_usage: true`. When the client's bytes go out unchanged and hold no
 * `stream_options`, the member is spliced in after their opening brace (no re-serialisation of a long prompt);
 * otherwise the object is serialised with the option set, the client's other stream options kept.
 */
export function withUsageRequested(wire: JsonObject, raw: Uint8Array | undefined): string | Uint8Array {
  const open = raw && !('stream_options' in wire) ? raw.indexOf(0x7b /* { */) : -1;
  if (raw && open >= 0) {
    const out = new Uint8Array(raw.byteLength + OPTION.byteLength);
    out.set(raw.subarray(0, open + 1));
    out.set(OPTION, open + 1);
    out.set(raw.subarray(open + 1), open + 1 + OPTION.byteLength);
    return out;
  }
  const options = isObject(wire.stream_options) ? wire.stream_options : {};
  return JSON.stringify({ ...wire, stream_options: { ...options, include_usage: true } });
}
