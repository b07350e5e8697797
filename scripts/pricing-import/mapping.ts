/**
 * Which of LiteLLM's providers (`litellm_provider`) feed which of our provider packages, how LiteLLM's keys become
 * the model ids our adapters take, and each package's own public pricing page (the catalogue's `source`). Read by
 * scripts/import-prices.ts; docs/pricing.md explains the rules.
 */

/** One LiteLLM provider feeding a package. */
export interface LitellmFeed {
  /** `litellm_provider` in the compilation. */
  readonly provider: string;
  /** Prefixes LiteLLM puts before the provider's own model id (`gemini/`), stripped when present. */
  readonly prefixes: readonly string[];
  /** Turns the stripped key into our adapter's model id; undefined leaves the entry out (a variant, not an id). */
  readonly id?: (key: string) => string | undefined;
}

export interface PackageFeeds {
  /** The provider's own public pricing page. */
  readonly source: string;
  readonly feeds: readonly LitellmFeed[];
  /** Package-specific rules, said in the file's note. */
  readonly rule?: string;
}

/** A key that still holds a `/` is a LiteLLM variant (a region, a commitment term, an image size), not a model id. */
const plain = (key: string) => (key.includes('/') ? undefined : key);

const feed = (provider: string, id?: LitellmFeed['id'], ...extraPrefixes: string[]): LitellmFeed => ({
  provider,
  prefixes: [`${provider}/`, ...extraPrefixes],
  ...(id ? { id } : {}),
});

const notFineTuning = (key: string) => (key.startsWith('ft:') ? undefined : plain(key));

/**
 * Vertex AI model ids as our vertex-ai adapter takes them (providers/vertex-ai/src/models.ts): Gemini models by their
 * bare name, Anthropic's as `anthropic.<model>[@<version>]`, other publishers' as `publishers/<pub>/models/<model>`.
 */
const vertexPartner =
  (publisher?: string) =>
  (key: string): string | undefined => {
    const parts = key.split('/');
    if (parts.length === 2) return `publishers/${parts[0]}/models/${parts[1]}`;
    if (parts.length === 1 && publisher) return `publishers/${publisher}/models/${key}`;
    return undefined;
  };
const vertexGoogle = (key: string) => (key.includes('/') ? vertexPartner()(key) : key);

/**
 * A Bedrock model id or inference profile id: `<vendor>.<model>` with an optional geography (`us.`, `global.`, …).
 * LiteLLM also lists some models under other spellings (no vendor, `@<version>`), which Bedrock does not take.
 */
const bedrockId = (key: string) => (/^[a-z0-9-]+\.[^@/]+$/.test(key) ? key : undefined);

/** By our package name. Packages not listed here are left as they are. */
export const PACKAGES: Readonly<Record<string, PackageFeeds>> = {
  openai: {
    source: 'https://developers.openai.com/api/docs/pricing',
    // `ft:` entries price fine-tuning's base models; a fine-tuned model's id carries the organisation and a suffix.
    feeds: [feed('openai', notFineTuning), feed('text-completion-openai', notFineTuning)],
  },
  anthropic: { source: 'https://platform.claude.com/docs/en/about-claude/pricing', feeds: [feed('anthropic', plain)] },
  deepseek: { source: 'https://api-docs.deepseek.com/quick_start/pricing-details-usd', feeds: [feed('deepseek', plain)] },
  'azure-openai': {
    source: 'https://azure.microsoft.com/en-us/pricing/details/cognitive-services/openai-service/',
    feeds: [feed('azure', plain)],
    rule: "Global deployment prices: LiteLLM's regional (eu/, us/) Data Zone variants are left out. A call is priced by the model it names: a deployment alias named otherwise costs null unless its integration model carries prices. Azure AI Foundry models (LiteLLM's azure_ai) are another service and are not here.",
  },
  bedrock: {
    source: 'https://aws.amazon.com/bedrock/pricing/',
    feeds: [feed('bedrock', bedrockId), feed('bedrock_converse', bedrockId, 'bedrock/')],
    rule: 'On-demand prices by Bedrock model id and cross-region inference profile id (us., eu., apac., global. …); LiteLLM\'s per-region and commitment-term (provisioned throughput) entries are left out, and so is the bedrock-mantle endpoint.',
  },
  cerebras: { source: 'https://www.cerebras.ai/pricing', feeds: [feed('cerebras')] },
  cohere: { source: 'https://cohere.com/pricing', feeds: [feed('cohere', plain), feed('cohere_chat', plain, 'cohere/')] },
  dashscope: { source: 'https://www.alibabacloud.com/help/en/model-studio/models', feeds: [feed('dashscope', plain)] },
  deepinfra: { source: 'https://deepinfra.com/pricing', feeds: [feed('deepinfra')] },
  'fireworks-ai': {
    source: 'https://fireworks.ai/pricing',
    // LiteLLM's `fireworks-ai-<size>` entries are size bands for models it does not list, not model ids.
    feeds: [feed('fireworks_ai'), feed('fireworks_ai-embedding-models', undefined, 'fireworks_ai/')],
  },
  google: {
    source: 'https://ai.google.dev/gemini-api/docs/pricing',
    feeds: [feed('gemini', plain)],
    rule: 'Prices of the first context tier (prompts up to 200k tokens where the page has two).',
  },
  groq: { source: 'https://groq.com/pricing', feeds: [feed('groq')] },
  hyperbolic: { source: 'https://hyperbolic.ai/pricing', feeds: [feed('hyperbolic')] },
  lambda: { source: 'https://lambda.ai/inference', feeds: [feed('lambda_ai')] },
  'mistral-ai': { source: 'https://mistral.ai/pricing', feeds: [feed('mistral', plain)] },
  moonshot: { source: 'https://platform.moonshot.ai/docs/pricing/chat', feeds: [feed('moonshot', plain)] },
  nebius: { source: 'https://nebius.com/token-factory/prices', feeds: [feed('nebius')] },
  'novita-ai': { source: 'https://novita.ai/pricing', feeds: [feed('novita')] },
  openrouter: { source: 'https://openrouter.ai/models', feeds: [feed('openrouter')] },
  'perplexity-ai': {
    source: 'https://docs.perplexity.ai/getting-started/pricing',
    feeds: [feed('perplexity', plain)],
    rule: 'per_request is the request fee at the default (low) search context size; medium and high cost more.',
  },
  sambanova: { source: 'https://cloud.sambanova.ai/plans/pricing', feeds: [feed('sambanova', plain)] },
  siliconflow: { source: 'https://www.siliconflow.com/pricing', feeds: [] },
  'together-ai': {
    source: 'https://www.together.ai/pricing',
    // LiteLLM's `together-ai-<size>` entries are size bands, not model ids.
    feeds: [feed('together_ai')],
  },
  'vertex-ai': {
    source: 'https://cloud.google.com/vertex-ai/generative-ai/pricing',
    feeds: [
      feed('vertex_ai-language-models', vertexGoogle, 'vertex_ai/'),
      feed('vertex_ai-embedding-models', vertexGoogle, 'vertex_ai/'),
      feed('vertex_ai-text-models', vertexGoogle, 'vertex_ai/'),
      feed('vertex_ai', vertexGoogle),
      feed('vertex_ai-anthropic_models', (k) => (k.includes('/') ? undefined : `anthropic.${k}`), 'vertex_ai/'),
      feed('vertex_ai-llama_models', vertexPartner('meta'), 'vertex_ai/'),
      feed('vertex_ai-mistral_models', vertexPartner('mistralai'), 'vertex_ai/'),
      feed('vertex_ai-ai21_models', vertexPartner('ai21'), 'vertex_ai/'),
      feed('vertex_ai-deepseek_models', vertexPartner(), 'vertex_ai/'),
      feed('vertex_ai-qwen_models', vertexPartner(), 'vertex_ai/'),
      feed('vertex_ai-openai_models', vertexPartner(), 'vertex_ai/'),
      feed('vertex_ai-zai_models', vertexPartner(), 'vertex_ai/'),
      feed('vertex_ai-minimax_models', vertexPartner(), 'vertex_ai/'),
      feed('vertex_ai-moonshot_models', vertexPartner(), 'vertex_ai/'),
    ],
    rule: "Ids as the vertex-ai adapter takes them: Gemini models by name, Anthropic's as anthropic.<model>[@<version>], other publishers' as publishers/<publisher>/models/<model>. Prices of the first context tier.",
  },
  'x-ai': { source: 'https://docs.x.ai/docs/models', feeds: [feed('xai', plain)] },
};

/** Servers run by their users: no list price, whatever LiteLLM says (its ollama entries are zeros). */
export const SELF_HOSTED: Readonly<Record<string, string>> = {
  ollama: 'https://ollama.com',
  'lm-studio': 'https://lmstudio.ai',
  vllm: 'https://docs.vllm.ai',
};

/** LiteLLM modes whose prices are per token of a call the gateway prices (chat, text completion, embeddings). */
export const PRICED_MODES: ReadonlySet<string> = new Set(['chat', 'completion', 'responses', 'embedding']);

/** LiteLLM's size-band fallbacks (`fireworks-ai-up-to-4b`, `together-ai-8.1b-21b`): not model ids. */
export const SIZE_BAND = /^(?:fireworks-ai|together-ai)-/;
