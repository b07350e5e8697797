/**
 * The target fields of cloud provider A (AWS-style) that this provider reads: the access keys it signs with (or that
 * assume `svcA_role_arn`), and the region in the runtime host name (config-fields.ts in the SDK).
 */
import { defineConfigFields, type FieldValues } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';

/** AWS IAM role ARN (`arn:aws:iam::123456789012:role/name`, partitions aws, aws-cn, aws-us-gov). */
export const ROLE_ARN = '^arn:aws(-[a-z]+)*:iam::\\d{12}:role/[\\w+=,.@/-]{1,512}$';

export const bedrockFields = defineConfigFields({
  fields: {
    svcA_access_key_id: Type.String(),
    svcA_secret_access_key: Type.String(),
    svcA_region: Type.String(),
    svcA_session_token: Type.String(),
    /** A role the keys assume before signing; shown in clear (an identifier, per SPEC.md). */
    svcA_role_arn: Type.String({ pattern: ROLE_ARN }),
    svcA_external_id: Type.String(),
  },
  secret: ['svcA_access_key_id', 'svcA_secret_access_key', 'svcA_session_token', 'svcA_external_id'],
  // The region is in the host name; the role (and its external id) is the identity the keys act as.
  destination: ['svcA_region', 'svcA_role_arn', 'svcA_external_id'],
  credentialSets: [['svcA_access_key_id', 'svcA_secret_access_key']],
  // Signed into the request's headers.
  headerBound: ['svcA_access_key_id', 'svcA_secret_access_key', 'svcA_session_token'],
});

declare module '@gateway/sdk' {
  interface PluginConfigFields extends FieldValues<typeof bedrockFields> {}
}
