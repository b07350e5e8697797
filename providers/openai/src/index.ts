import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

export const openai = openAICompatible({
  id: 'openai',
  baseUrl: 'https://api.openai.com/v1',
  headers: (target) => {
    const scoping: Record<string, string> = {};
    if (typeof target.svcD_organization === 'string') scoping['openai-organization'] = target.svcD_organization;
    if (typeof target.svcD_project === 'string') scoping['openai-project'] = target.svcD_project;
    return scoping;
  },
});

export default definePlugin({ setup: (api) => api.provider(openai) });
