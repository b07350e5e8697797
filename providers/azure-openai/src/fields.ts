/**
 * The target fields of cloud provider B (Azure-style) that `azure-openai` and `azure-ai` read: the resource or
 * endpoint in the host name, the deployment and API version in the path, and an Entra ID service principal
 * (config-fields.ts in the SDK). One declaration for both adapters.
 */
import { defineConfigFields, type FieldValues } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';

const Deployment = Type.Object(
  { deployment_id: Type.String(), alias: Type.String(), api_version: Type.String(), is_default: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const azureFields = defineConfigFields({
  fields: {
    resource_name: Type.String(),
    deployment_id: Type.String(),
    api_version: Type.String(),
    deployments: Type.Array(Deployment),
    svcB_region: Type.String(),
    svcB_deployment_name: Type.String(),
    svcB_endpoint_name: Type.String(),
    svcB_api_version: Type.String(),
    svcB_deployment_type: Type.Union([Type.Literal('serverless'), Type.Literal('managed')]),
    svcB_entra_scope: Type.String(),
    // Microsoft Entra ID service principal (client-credentials grant).
    svcB_entra_tenant_id: Type.String(),
    svcB_entra_client_id: Type.String(),
    svcB_entra_client_secret: Type.String(),
    svcB_resource_name: Type.String(),
    svcB_deployment_id: Type.String(),
    svcB_model_name: Type.String(),
  },
  secret: ['svcB_entra_client_secret'],
  // The resource or endpoint is in the host name; the Entra tenant, client and scope are the identity. A deployment,
  // an API version or a model only choose a path on the same host.
  destination: [
    'resource_name',
    'svcB_resource_name',
    'svcB_region',
    'svcB_endpoint_name',
    'svcB_deployment_name',
    'svcB_deployment_type',
    'svcB_entra_tenant_id',
    'svcB_entra_client_id',
    'svcB_entra_scope',
  ],
  credentialSets: [
    ['svcB_deployment_name', 'svcB_deployment_type', 'svcB_region', 'svcB_api_version'],
    ['svcB_endpoint_name', 'svcB_deployment_type'],
    ['svcB_entra_tenant_id', 'svcB_entra_client_id', 'svcB_entra_client_secret'],
  ],
});

declare module '@gateway/sdk' {
  interface PluginConfigFields extends FieldValues<typeof azureFields> {}
}
