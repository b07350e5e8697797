/**
 * A workspace's `defaults.metadata` under a request's own metadata (the request's keys win), so that its logs,
 * conditional routing, policies and guardrails see it. Both objects are frozen and shared across requests (the
 * header's parse cache, the workspace snapshot), so each pair is merged once and the result kept by their identity:
 * weakly, so a changed workspace or an evicted header takes its merges with it.
 */
const merged = new WeakMap<object, WeakMap<object, Readonly<Record<string, string>>>>();

export function withWorkspaceMetadata(
  metadata: Readonly<Record<string, string>>,
  defaults: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> {
  if (defaults === undefined) return metadata;
  let byRequest = merged.get(defaults);
  if (!byRequest) {
    byRequest = new WeakMap();
    merged.set(defaults, byRequest);
  }
  let out = byRequest.get(metadata);
  if (!out) {
    const both: Record<string, string> = Object.create(null);
    Object.assign(both, defaults, metadata);
    out = Object.freeze(both);
    byRequest.set(metadata, out);
  }
  return out;
}
