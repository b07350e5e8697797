/**
 * The official MCP SDK, loaded on first use: with zod and ajv it is about 20 MB resident, which a gateway that never
 * connects to an MCP upstream (the default) should not carry (issue #24, memory). Only the functions that talk to an
 * upstream (metadata sync, the SSE bridge, OAuth) load it; the modules are cached after the first load.
 */
export async function loadMcpClient() {
  const [{ Client }, { SSEClientTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  return { Client, SSEClientTransport, StreamableHTTPClientTransport };
}

export async function loadMcpAuth() {
  const [auth, { OAuthError }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/auth.js'),
    import('@modelcontextprotocol/sdk/server/auth/errors.js'),
  ]);
  return { ...auth, OAuthError };
}
