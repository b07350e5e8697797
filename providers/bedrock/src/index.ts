/**
 * The `bedrock` provider (cloud provider A's model runtime). Chat goes through Converse / ConverseStream for every
 * model family (Anthropic, Meta Llama, Mistral, Amazon, …), embeddings through InvokeModel (Titan, Cohere); every
 * call, passthrough ones included, is SigV4-signed with the target's svcA_ credentials (or, with svcA_role_arn, with
 * the temporary credentials of the role they assume through STS). The base URL is the regional runtime endpoint
 * `https://bedrock-runtime.<svcA_region>.amazonaws.com` (region us-east-1 by default), which a custom host replaces;
 * the signing region stays svcA_region.
 */
import { assistantPrefill, definePlugin, Errors, type EndpointTranslator, type JsonObject, type ProviderAdapter } from '@gateway/sdk';
import { createSigner, runtimeBaseUrl, signCall, stsEndpointFromEnv } from './auth.ts';
import { bedrockBatches } from './batch.ts';
import { endpointFromEnv } from './batch-aws.ts';
import { converseRequest, converseResponse } from './chat.ts';
import { embedRequest, embedResponse } from './embed.ts';
import { bedrockError } from './errors.ts';
import { bedrockFields } from './fields.ts';
import { modelFamily, modelPath } from './models.ts';
import { converseStreamChunks } from './stream.ts';

function modelOf(body: JsonObject): string {
  if (typeof body.model !== 'string' || !body.model) throw Errors.badRequest('model is required: the Bedrock model id or inference profile', 'model');
  return body.model;
}

export const chat: EndpointTranslator = {
  path: (_target, body) => modelPath(modelOf(body), body.stream === true ? 'converse-stream' : 'converse'),
  request: (body, _target, ctx) => converseRequest(body, ctx),
  response: converseResponse,
  stream: { framing: 'aws-eventstream', toChunks: converseStreamChunks },
  // Claude models continue a trailing assistant turn through Converse (Anthropic's prefill, whose text may not end in
  // whitespace); other families are not documented to, so their broken streams are regenerated.
  prefill: (body, text) =>
    typeof body.model === 'string' && modelFamily(body.model) === 'anthropic' ? assistantPrefill(body, text, { trimTrailingWhitespace: true }) : undefined,
};

export const embed: EndpointTranslator = {
  path: (_target, body) => modelPath(modelOf(body), 'invoke'),
  request: (body) => embedRequest(body),
  response: embedResponse,
};

export const bedrock: ProviderAdapter = {
  id: 'bedrock',
  baseUrl: runtimeBaseUrl,
  authorize: signCall,
  endpoints: { chatComplete: chat, embed },
  error: bedrockError,
  targetFields: bedrockFields,
  batches: bedrockBatches(signCall, {}),
  pricing: new URL('../pricing.json', import.meta.url),
};

export default definePlugin({
  setup(api) {
    // AWS_ENDPOINT_URL_STS (the AWS SDKs' variable): the operator's STS endpoint for svcA_role_arn, e.g. a VPC endpoint.
    const configured = api.env.AWS_ENDPOINT_URL_STS;
    const stsEndpoint = stsEndpointFromEnv(configured);
    if (configured?.trim() && !stsEndpoint) api.logger.warn({ AWS_ENDPOINT_URL_STS: configured }, 'AWS_ENDPOINT_URL_STS is not an http(s) URL; using the regional STS endpoints');
    // Batch inference's hosts (batch-aws.ts): the operator's control-plane and S3 endpoints, else AWS's regional ones.
    const endpoints = { bedrock: endpointFromEnv(api.env.AWS_ENDPOINT_URL_BEDROCK), s3: endpointFromEnv(api.env.AWS_ENDPOINT_URL_S3) };
    for (const name of ['AWS_ENDPOINT_URL_BEDROCK', 'AWS_ENDPOINT_URL_S3'] as const) {
      if (api.env[name]?.trim() && !endpointFromEnv(api.env[name])) api.logger.warn({ [name]: api.env[name] }, `${name} is not an http(s) URL; using AWS's regional endpoint`);
    }
    const sign = createSigner({ stsEndpoint });
    api.provider({ ...bedrock, authorize: sign, batches: bedrockBatches(sign, endpoints) });
  },
});
