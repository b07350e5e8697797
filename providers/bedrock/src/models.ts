/**
 * Bedrock model ids and what each model family accepts through the Converse API. Every chat model goes through
 * Converse; the differences that matter to translation are documented per family in the Bedrock user guide
 * ("Supported models and model features" of the Converse API, and the ToolChoice reference):
 *
 * - System prompts: not accepted by Mistral AI 7B Instruct, Mixtral 8x7B Instruct and the Amazon Titan Text models;
 *   for these the system text is put in front of the first user turn instead.
 * - `toolChoice`: "only supported by Anthropic Claude 3 models and by Mistral AI Mistral Large"; the specific-tool
 *   form only by Anthropic Claude 3 (and later) and Amazon Nova. `auto` is the default and never needs sending, so it
 *   is left out for every model (Meta Llama rejects the field altogether). `required` and a named function are sent
 *   as asked: the provider's own error is clearer than a silently dropped constraint.
 * - Tool use while streaming: not offered by some families (Meta Llama, Mistral Large); Bedrock answers a
 *   ValidationException, which is relayed as is.
 * - Embeddings are not a Converse feature: Titan Text Embeddings and Cohere Embed go through InvokeModel, each in its
 *   own body format (embed.ts).
 */

/** Cross-region inference profiles prefix the model id with a geography. */
const GEOGRAPHY = /^(?:us|eu|apac|us-gov|global|jp|au|ca)\./;

/**
 * The foundation-model id inside what a client sent: a plain id (`anthropic.claude-3-5-sonnet-20240620-v1:0`),
 * an inference profile (`us.anthropic.…`), or an ARN whose last path segment is one of those. Application inference
 * profiles and provisioned models have opaque ARNs; their family is unknown.
 */
export function baseModelId(model: string): string {
  let id = model.trim();
  if (id.startsWith('arn:')) id = id.slice(id.lastIndexOf('/') + 1);
  return id.replace(GEOGRAPHY, '');
}

/** The maker prefix of a model id: `anthropic`, `meta`, `mistral`, `amazon`, `cohere`, … ('' when unknown). */
export function modelFamily(model: string): string {
  const id = baseModelId(model);
  const dot = id.indexOf('.');
  return dot > 0 ? id.slice(0, dot).toLowerCase() : '';
}

export interface ChatQuirks {
  /** Accepts a `system` field; otherwise the system text is folded into the first user turn. */
  system: boolean;
  /** Accepts `toolChoice: {any: {}}`. */
  toolChoiceAny: boolean;
  /** Accepts `toolChoice: {tool: {name}}`. */
  toolChoiceTool: boolean;
}

const FULL: ChatQuirks = { system: true, toolChoiceAny: true, toolChoiceTool: true };

export function chatQuirks(model: string): ChatQuirks {
  const id = baseModelId(model).toLowerCase();
  switch (modelFamily(model)) {
    case 'anthropic':
      return FULL;
    case 'amazon':
      if (id.startsWith('amazon.titan-text')) return { system: false, toolChoiceAny: false, toolChoiceTool: false };
      return FULL; // Nova
    case 'mistral':
      if (/^mistral\.(mistral-7b-instruct|mixtral-8x7b-instruct)/.test(id)) return { system: false, toolChoiceAny: false, toolChoiceTool: false };
      if (/^mistral\.(mistral-large|pixtral-large)/.test(id)) return { system: true, toolChoiceAny: true, toolChoiceTool: false };
      return { system: true, toolChoiceAny: false, toolChoiceTool: false };
    case 'meta':
      return { system: true, toolChoiceAny: false, toolChoiceTool: false };
    default:
      // A family this table does not know: send what the client asked for and let the provider judge.
      return FULL;
  }
}

export type EmbeddingKind = 'titan' | 'cohere';

export function embeddingKind(model: string): EmbeddingKind | undefined {
  const id = baseModelId(model).toLowerCase();
  if (id.startsWith('amazon.titan-embed')) return 'titan';
  if (id.startsWith('cohere.embed')) return 'cohere';
  return undefined;
}

/** `/model/<id>/<action>` with the id URL-encoded as one path segment (ARNs contain `/` and ids contain `:`). */
export function modelPath(model: string, action: 'converse' | 'converse-stream' | 'invoke'): string {
  return `/model/${encodeURIComponent(model)}/${action}`;
}
