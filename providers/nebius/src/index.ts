import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin, type ProviderAdapter } from '@gateway/sdk';

/** Nebius AI Studio (Token Factory). */
export const provider: ProviderAdapter = {
  ...openAICompatible({
    id: 'nebius',
    pricing: new URL('../pricing.json', import.meta.url),
    baseUrl: 'https://api.studio.nebius.com/v1',
    unsupported: ['moderate'],
  }),
  // Nebius documents OpenAI's /v1/files, /v1/batches and /v1/fine_tuning/jobs in OpenAI's shape (the openai SDK
  // pointed at its base URL): such calls are forwarded there (docs/batches.md). Its fine-tuning jobs name files it
  // keeps, so files and batches are its too.
  nativeJobs: { files: true, batches: true, fineTuning: true },
};

export default definePlugin({ setup: (api) => api.provider(provider) });
