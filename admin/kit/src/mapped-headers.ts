/**
 * `secret_mappings` that fill request headers (MCP and agent integrations): a mapping's target is one header
 * (`headers.<Header-Name>`) or a JSON object of headers (`headers`, value_format json), resolved from secret
 * references at request time for the workspace the call acts in.
 */
import { Errors, type Json } from '@gateway/sdk';
import { type SecretMapping, type SecretResolver, setPath } from './contracts.ts';

/** A header name as RFC 9110 allows it. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Refuses (400) a mapping whose target is not `headers.<Header-Name>` or `headers`, or a header mapped twice. */
export function checkHeaderMappings(mappings: readonly SecretMapping[]): void {
  const seen = new Set<string>();
  mappings.forEach((m, i) => {
    const param = `secret_mappings[${i}].target_field`;
    const [head, name, ...rest] = m.target_field.split('.');
    const ok = head === 'headers' && rest.length === 0 && (name === undefined || HEADER_NAME.test(name));
    if (!ok) throw Errors.badRequest(`${param} must be "headers.<Header-Name>" or "headers"`, param);
    if (name === undefined && m.value_format !== 'json') throw Errors.badRequest(`${param} "headers" needs value_format json (an object of headers)`, param);
    const key = m.target_field.toLowerCase();
    if (seen.has(key)) throw Errors.badRequest(`${param} ${m.target_field} is mapped twice`, param);
    seen.add(key);
  });
}

function headerValue(value: Json | undefined, field: string, upstream: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw Errors.upstreamInvalid(upstream, `The secret mapped to ${field} is not a header value`);
}

/**
 * The headers `mappings` give for a call acting in `workspaceId` (empty without mappings). `upstream` names the
 * upstream in errors (`mcp`, `a2a`).
 */
export async function resolveMappedHeaders(
  resolver: SecretResolver | undefined,
  organisationId: string,
  workspaceId: string,
  mappings: readonly SecretMapping[],
  upstream: string,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  if (mappings.length === 0) return headers;
  if (!resolver) throw Errors.upstreamInvalid(upstream, 'This integration reads secret references, and the secret-references plugin is not loaded');
  const values = await resolver.resolve(organisationId, workspaceId, mappings);
  const tree: Record<string, Json> = {};
  for (const [field, value] of Object.entries(values)) setPath(tree, field, value);
  const mapped = tree.headers;
  if (mapped !== null && typeof mapped === 'object' && !Array.isArray(mapped))
    for (const [name, value] of Object.entries(mapped)) {
      if (!HEADER_NAME.test(name)) throw Errors.upstreamInvalid(upstream, `The secret mapped to headers names an invalid header ${JSON.stringify(name)}`);
      headers[name] = headerValue(value, `headers.${name}`, upstream);
    }
  else if (mapped !== undefined) throw Errors.upstreamInvalid(upstream, 'The secret mapped to headers is not an object of headers');
  return headers;
}
