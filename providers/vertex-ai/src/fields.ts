/**
 * The target fields of cloud provider C (Google-style) that this provider reads: the region in the host name, the
 * project, and the service account whose token authorizes the call (config-fields.ts in the SDK).
 */
import { defineConfigFields, type FieldValues } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';

export const vertexFields = defineConfigFields({
  fields: {
    svcC_project_id: Type.String(),
    svcC_region: Type.String(),
    svcC_service_account_json: Type.Record(Type.String(), Type.Unknown()),
  },
  secret: ['svcC_service_account_json'],
  // The region is in the host name; the project is where the service account acts.
  destination: ['svcC_region', 'svcC_project_id'],
  credentialSets: [
    ['svcC_region', 'svcC_service_account_json'],
    ['svcC_region', 'svcC_project_id'],
  ],
});

declare module '@gateway/sdk' {
  interface PluginConfigFields extends FieldValues<typeof vertexFields> {}
}
