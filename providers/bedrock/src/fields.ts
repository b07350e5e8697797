/**
 * The target fields of cloud provider A (AWS-style) that this provider reads: the access keys it signs with (or that
 * assume `svcA_role_arn`), the region in the runtime host name (config-fields.ts in the SDK), and for batch inference
 * (batch.ts) the bucket its input and output go through and the service role Bedrock runs the job as.
 */
import { defineConfigFields, type FieldValues } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';

/** An S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens; it goes into a host name). */
export const BUCKET = '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$';

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
    /** Batch inference: the bucket the gateway writes a batch's records to and Bedrock writes its results to. */
    svcA_batch_bucket: Type.String({ pattern: BUCKET }),
    /** Batch inference: prepended to the bucket's keys, e.g. `gateway-batches/`. */
    svcA_batch_prefix: Type.String({ pattern: '^[A-Za-z0-9_./-]{0,512}$' }),
    /** Batch inference: the service role Bedrock assumes to read and write the bucket (the job's roleArn). */
    svcA_batch_role_arn: Type.String({ pattern: ROLE_ARN }),
  },
  secret: ['svcA_access_key_id', 'svcA_secret_access_key', 'svcA_session_token', 'svcA_external_id'],
  // The region is in the host name; the role (and its external id) is the identity the keys act as; a batch's prompts
  // and answers go to the bucket, read and written there by the batch role.
  destination: ['svcA_region', 'svcA_role_arn', 'svcA_external_id', 'svcA_batch_bucket', 'svcA_batch_prefix', 'svcA_batch_role_arn'],
  credentialSets: [['svcA_access_key_id', 'svcA_secret_access_key']],
  // Signed into the request's headers.
  headerBound: ['svcA_access_key_id', 'svcA_secret_access_key', 'svcA_session_token'],
});

declare module '@gateway/sdk' {
  interface PluginConfigFields extends FieldValues<typeof bedrockFields> {}
}
