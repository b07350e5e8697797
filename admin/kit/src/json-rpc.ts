/**
 * What the JSON-RPC proxies (the MCP proxy, the A2A proxy) share: the cap on an upstream's whole answer, read while
 * counting, and a gateway error as a JSON-RPC error response (docs/admin/mcp.md, docs/admin/agents.md).
 */
import { GatewayError } from '@gateway/sdk';

/** Default of TOOL_MAX_ANSWER_BYTES: 32 MiB, the default of MAX_REQUEST_BODY_BYTES. */
export const DEFAULT_TOOL_MAX_ANSWER_BYTES = 33_554_432;

/** TOOL_MAX_ANSWER_BYTES: the largest non-streamed answer an MCP or A2A upstream may send; throws when not a positive integer. */
export function toolMaxAnswerBytes(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env.TOOL_MAX_ANSWER_BYTES;
  if (raw === undefined || raw === '') return DEFAULT_TOOL_MAX_ANSWER_BYTES;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error('TOOL_MAX_ANSWER_BYTES must be a positive integer (bytes)');
  return value;
}

/**
 * The body as text, or undefined once it passes `limit` bytes: counted as it arrives, the rest never read (the body
 * is cancelled), so an endless answer costs at most the limit plus a chunk.
 */
export async function readCappedText(res: Response, limit: number): Promise<string | undefined> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** JSON-RPC's code for a refusal by the gateway (a server error of the implementation-defined range). */
export const RPC_GATEWAY_REFUSED = -32000;
/** JSON-RPC's internal error: the gateway could not get a usable answer from the upstream. */
export const RPC_INTERNAL_ERROR = -32603;

/**
 * `error` as a JSON-RPC error response to the request `id`: the error's HTTP status and headers (`Retry-After`), and
 * a body JSON-RPC clients read, `{"jsonrpc":"2.0","id",error:{code,message,data}}`, whose `data` is INTERFACE.md's
 * error object (`type`, `code`, `param`) with the error's extra properties (`hook_results`).
 */
export function jsonRpcError(error: GatewayError, id: unknown): Response {
  return new Response(JSON.stringify(jsonRpcErrorMessage(error, id)), { status: error.status, headers: { 'content-type': 'application/json', ...error.headers } });
}

/** The JSON-RPC error message alone, for a reply inside an answer (an event of a stream, one of a batch). */
export function jsonRpcErrorMessage(error: GatewayError, id: unknown) {
  const { error: detail, ...extra } = error.toBody();
  const code = error.status >= 500 ? RPC_INTERNAL_ERROR : RPC_GATEWAY_REFUSED;
  return { jsonrpc: '2.0' as const, id: id ?? null, error: { code, message: detail.message, data: { ...detail, ...extra } } };
}

/** A refusal as a GatewayError (a stage that threw something else failed: 500, its message not shown). */
export function asGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError({ code: 'internal', status: 500, message: error instanceof Error ? error.message : String(error), expose: false, cause: error });
}
