import { describe, expect, test } from 'bun:test';
import { bedrockError } from './errors.ts';
import { baseModelId, chatQuirks, embeddingKind, modelFamily, modelPath } from './models.ts';

describe('model ids', () => {
  test('plain ids, inference profiles and ARNs reduce to the foundation model id', () => {
    expect(baseModelId('anthropic.claude-3-5-sonnet-20240620-v1:0')).toBe('anthropic.claude-3-5-sonnet-20240620-v1:0');
    expect(baseModelId('us.anthropic.claude-3-7-sonnet-20250219-v1:0')).toBe('anthropic.claude-3-7-sonnet-20250219-v1:0');
    expect(baseModelId('global.anthropic.claude-sonnet-4-20250514-v1:0')).toBe('anthropic.claude-sonnet-4-20250514-v1:0');
    expect(baseModelId('arn:aws:bedrock:us-east-1::foundation-model/meta.llama3-1-70b-instruct-v1:0')).toBe('meta.llama3-1-70b-instruct-v1:0');
    expect(modelFamily('arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.mistral.pixtral-large-2502-v1:0')).toBe('mistral');
    expect(modelFamily('arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3')).toBe('');
  });

  test('the model id is one URL-encoded path segment', () => {
    expect(modelPath('anthropic.claude-3-5-sonnet-20240620-v1:0', 'converse')).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    expect(modelPath('arn:aws:bedrock:us-east-1::foundation-model/x.y', 'converse-stream')).toBe(
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A%3Afoundation-model%2Fx.y/converse-stream',
    );
  });

  test('per-family quirks', () => {
    expect(chatQuirks('anthropic.claude-3-haiku-20240307-v1:0')).toEqual({ system: true, toolChoiceAny: true, toolChoiceTool: true });
    expect(chatQuirks('us.amazon.nova-pro-v1:0')).toEqual({ system: true, toolChoiceAny: true, toolChoiceTool: true });
    expect(chatQuirks('amazon.titan-text-express-v1').system).toBe(false);
    expect(chatQuirks('meta.llama3-1-70b-instruct-v1:0')).toEqual({ system: true, toolChoiceAny: false, toolChoiceTool: false });
    expect(chatQuirks('mistral.mistral-large-2407-v1:0')).toEqual({ system: true, toolChoiceAny: true, toolChoiceTool: false });
    expect(chatQuirks('mistral.mistral-7b-instruct-v0:2').system).toBe(false);
    expect(chatQuirks('mistral.mixtral-8x7b-instruct-v0:1').system).toBe(false);
    expect(chatQuirks('mistral.mistral-small-2402-v1:0')).toEqual({ system: true, toolChoiceAny: false, toolChoiceTool: false });
  });

  test('embedding models', () => {
    expect(embeddingKind('amazon.titan-embed-text-v2:0')).toBe('titan');
    expect(embeddingKind('amazon.titan-embed-text-v1')).toBe('titan');
    expect(embeddingKind('cohere.embed-multilingual-v3')).toBe('cohere');
    expect(embeddingKind('us.cohere.embed-v4:0')).toBe('cohere');
    expect(embeddingKind('anthropic.claude-3-haiku-20240307-v1:0')).toBeUndefined();
  });
});

describe('error bodies', () => {
  test('the provider message is kept; type and code follow the status', () => {
    expect(bedrockError({ message: 'Too many requests, please wait before trying again.' }, 429)).toEqual({
      message: 'Too many requests, please wait before trying again.',
      type: 'rate_limit_error',
      code: 'ThrottlingException',
      param: null,
    });
    expect(bedrockError({ Message: 'User is not authorized' }, 403)).toMatchObject({ message: 'User is not authorized', code: 'AccessDeniedException' });
    expect(bedrockError({ message: 'x', __type: 'com.amazon.coral.validate#ValidationException' }, 400)?.code).toBe('ValidationException');
    expect(bedrockError({ message: 'odd' }, 418)).toEqual({ message: 'odd', type: 'provider_error', code: null, param: null });
    expect(bedrockError({ error: 'no message' }, 400)).toBeUndefined();
    expect(bedrockError('text', 400)).toBeUndefined();
  });
});
