import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin, type ProviderAdapter } from '@gateway/sdk';
import { openaiFields } from './fields.ts';

export const openai: ProviderAdapter = {
  ...openAICompatible({
    id: 'openai',
    pricing: new URL('../pricing.json', import.meta.url),
    baseUrl: 'https://api.openai.com/v1',
    // Documented for chat and text completions: every stream's usage is known at completion.
    streamOptions: true,
    // OpenAI's Responses API: forwarded as it is (docs/responses.md).
    responses: true,
    headers: (target) => {
      const scoping: Record<string, string> = {};
      if (typeof target.svcD_organization === 'string') scoping['openai-organization'] = target.svcD_organization;
      if (typeof target.svcD_project === 'string') scoping['openai-project'] = target.svcD_project;
      return scoping;
    },
  }),
  targetFields: openaiFields,
  // OpenAI keeps files, runs batches and fine-tuning jobs: such calls are forwarded (docs/batches.md).
  nativeJobs: { files: true, batches: true, fineTuning: true },
};

export default definePlugin({ setup: (api) => api.provider(openai) });
