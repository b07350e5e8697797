/** The target fields OpenAI reads beyond an api key: the organisation and project a key acts for (SPEC.md's D). */
import { defineConfigFields, type FieldValues } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';

export const openaiFields = defineConfigFields({
  fields: { svcD_organization: Type.String(), svcD_project: Type.String() },
  // They scope an account on the same host: neither secret nor a destination. Sent as request headers.
  headerBound: ['svcD_organization', 'svcD_project'],
});

declare module '@gateway/sdk' {
  interface PluginConfigFields extends FieldValues<typeof openaiFields> {}
}
