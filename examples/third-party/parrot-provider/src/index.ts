/**
 * Parrot as a gateway provider. Parrot is an example vendor with an API of its own: one call, `POST /v1/reply`, that
 * takes a prompt and answers `{ reply, words_in, words_out }`, on a host per account
 * (`https://<account>.parrot.example`), with a token in `authorization: Parrot <token>`.
 *
 * What it shows: a provider's own config fields (`parrot_account` decides where the token goes, `parrot_token` is
 * the secret), translation both ways to and from OpenAI's chat shape, a provider error format, and errors thrown
 * with the SDK's `Errors` (they keep their status in the gateway, whichever copy of the SDK this package gets).
 */
import { defineConfigFields, definePlugin, Errors, type FieldValues, type JsonObject, type ProviderAdapter } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';

export const parrotFields = defineConfigFields({
  fields: {
    parrot_account: Type.String({ pattern: '^[a-z][a-z0-9-]{0,30}$' }),
    parrot_token: Type.String({ minLength: 8 }),
  },
  secret: ['parrot_token'], // masked, sealed and redacted from logs
  destination: ['parrot_account'], // the account names the host the token is sent to
  credentialSets: [['parrot_account', 'parrot_token']], // with `provider`, stands in for `api_key`
  headerBound: ['parrot_account', 'parrot_token'], // both travel in headers
});

// The same fields on GatewayConfig and TargetConfig, for the type checker.
declare module '@gateway/sdk' {
  interface PluginConfigFields extends FieldValues<typeof parrotFields> {}
}

interface ParrotAnswer {
  reply: string;
  words_in: number;
  words_out: number;
}

/** Parrot takes one prompt: the conversation as `role: content` lines. */
function promptOf(body: JsonObject): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return messages
    .map((m) => (m && typeof m === 'object' && !Array.isArray(m) && typeof m.content === 'string' ? `${String(m.role)}: ${m.content}` : ''))
    .filter(Boolean)
    .join('\n');
}

export const parrot: ProviderAdapter = {
  id: 'parrot',
  baseUrl: (target) => `https://${target.parrot_account ?? 'www'}.parrot.example`,
  authorize(call, target) {
    const account = target.parrot_account;
    const token = target.parrot_token ?? target.api_key; // `Authorization: Bearer` with x-gateway-provider works too
    if (!account) throw Errors.badRequest('Provider parrot needs parrot_account in the config', 'parrot_account');
    if (!token) throw Errors.unauthorized('Provider parrot needs parrot_token (or an Authorization header)');
    return { ...call, headers: { ...call.headers, authorization: `Parrot ${token}`, 'x-parrot-account': account } };
  },
  endpoints: {
    chatComplete: {
      path: () => '/v1/reply',
      request: (body) => ({ model: body.model ?? 'parrot-1', prompt: promptOf(body) }),
      response(json, ctx) {
        const answer = json as ParrotAnswer;
        return {
          id: `parrot-${ctx.now}`,
          object: 'chat.completion',
          created: ctx.now,
          model: ctx.model ?? 'parrot-1',
          choices: [{ index: 0, message: { role: 'assistant', content: answer.reply }, finish_reason: 'stop', logprobs: null }],
          usage: { prompt_tokens: answer.words_in, completion_tokens: answer.words_out, total_tokens: answer.words_in + answer.words_out },
        };
      },
    },
  },
  // Parrot's errors are `{ "problem": "…" }`.
  error: (json) => {
    const problem = (json as { problem?: unknown } | null)?.problem;
    return typeof problem === 'string' ? { message: problem, type: 'provider_error' } : undefined;
  },
  targetFields: parrotFields,
};

export default definePlugin({ setup: (api) => api.provider(parrot) });
