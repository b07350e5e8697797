/**
 * `prompt_id` in a config (SPEC.md, Config object): a gateway call whose config names a prompt sends that prompt
 * rendered. The client's body is `variables` and any hyperparameters beside them (over the saved ones), as for
 * POST /prompts/:id/completions; the request stage below makes the body from the prompt's version before the input
 * hooks and guardrails see it, and marks the request with the prompt (`req.prompt`, for the request log).
 *
 * The prompt may be named at the config's root or on its targets (`"support-bot"`, `"support-bot@3"`,
 * `"<id>@latest"`), and is looked up as a client's reference is (an id, or a slug in the caller's workspace; another
 * workspace's 403). One prompt per config: targets that name different prompts are refused (400). The body is made
 * once per request, before routing, because input hooks and guardrails judge one body per request before routing
 * (ARCHITECTURE.md): a per-target body would reach a provider unjudged.
 */
import { Errors, type GatewayConfig, type GatewayRequest, type JsonObject, type RequestStage } from '@gateway/sdk';
import { renderBody } from './render.ts';
import { parseReference, type PromptStore, versionNumber } from './store.ts';

/** The prompt a config names, undefined for none; a config object is read once (configs are cached and shared). */
const named = new WeakMap<GatewayConfig, string | null | Error>();

function collect(node: GatewayConfig, out: Set<string>): void {
  if (typeof node.prompt_id === 'string') out.add(node.prompt_id);
  for (const child of node.targets ?? []) collect(child as GatewayConfig, out);
}

/** The prompt reference a config names, null for none, an Error listing them when it names several. */
function lookup(config: GatewayConfig): string | null | Error {
  // A header-built config is a new object per request: answer the common single-target case without the map.
  if (config.targets === undefined) return typeof config.prompt_id === 'string' ? config.prompt_id : null;
  let found = named.get(config);
  if (found === undefined) {
    const all = new Set<string>();
    collect(config, all);
    found = all.size === 0 ? null : all.size === 1 ? ([...all][0] as string) : new Error([...all].join(', '));
    named.set(config, found);
  }
  return found;
}

/** Whether a config names a prompt anywhere (cheap after the first call per config object). */
export function namesPrompt(config: GatewayConfig): boolean {
  return lookup(config) !== null;
}

/** The one prompt a config names; 400 when its targets name several. */
export function promptOf(config: GatewayConfig): string {
  const found = lookup(config);
  if (found instanceof Error) throw Errors.badRequest(`The config names different prompts (${found.message}); a config names one prompt`, 'config.prompt_id');
  if (found === null) throw Errors.internal('promptOf: the config names no prompt');
  return found;
}

const ENDPOINT_KIND = { chatComplete: 'chat', complete: 'text' } as const;

export function promptStage(store: PromptStore): RequestStage {
  return {
    name: 'prompts:render',
    phase: 'request',
    rule: 'sequential',
    // Guardrails and hooks judge the rendered prompt, not the variables.
    before: 'hooks:input',
    // A call that already runs from a prompt (POST /prompts/:id/completions) was rendered by its route.
    applies: (req) => req.prompt === undefined && req.body !== undefined && namesPrompt(req.config),
    async run(req: GatewayRequest) {
      const reference = promptOf(req.config);
      const kind = ENDPOINT_KIND[req.endpoint as keyof typeof ENDPOINT_KIND];
      if (!kind) throw Errors.badRequest(`A config with prompt_id is for /chat/completions or /completions, not ${req.path}`, 'config.prompt_id');
      const { ref, choice } = parseReference(reference);
      const entry = store.find(ref, req.caller);
      const loaded = await store.version(entry, versionNumber(entry, choice));
      if (loaded.compiled.kind !== kind)
        throw Errors.badRequest(
          `The prompt ${JSON.stringify(reference)} is a ${loaded.compiled.kind} template: call ${loaded.compiled.kind === 'chat' ? '/chat/completions' : '/completions'}`,
          'config.prompt_id',
        );
      const { variables, ...overrides } = req.body as JsonObject;
      if (variables !== undefined && (variables === null || typeof variables !== 'object' || Array.isArray(variables)))
        throw Errors.badRequest('variables must be an object', 'variables');
      const partials = await store.partials(loaded.compiled, entry.workspaceId);
      req.body = renderBody(loaded.compiled, (variables ?? {}) as Record<string, unknown>, overrides, partials);
      req.prompt = { id: entry.id, version: loaded.version };
    },
  };
}
