/** Test support: requests and contexts as the hook engine hands them to checks, deep-frozen to catch mutation. */
import type { GatewayRequest, GuardrailCheckContext, Json, JsonObject } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export function testRequest(overrides: Partial<GatewayRequest> = {}): GatewayRequest {
  return buildGatewayRequest({ ...overrides, body: deepFreeze(overrides.body ?? chat('hello')) });
}

/** A chat request whose last user message is `text` (string content). */
export function chat(text: string, extra: JsonObject = {}): JsonObject {
  return { model: 'gpt-4o', messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: text }], ...extra };
}

/** A chat completion answering `text`. */
export function answer(text: Json, extra: JsonObject = {}): JsonObject {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'gpt-4o',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    ...extra,
  };
}

/** Input-phase context on a chat request whose last user message is `text` (or on `body` when an object). */
export function input(text: string | JsonObject, overrides: Partial<GatewayRequest> = {}): GuardrailCheckContext {
  const body = typeof text === 'string' ? chat(text) : text;
  return { request: testRequest({ ...overrides, body }), phase: 'input' };
}

/** Output-phase context on an answer `text` (or on `body` when an object). */
export function output(text: string | JsonObject, overrides: Partial<GatewayRequest> = {}): GuardrailCheckContext {
  const body = typeof text === 'string' ? answer(text) : text;
  return { request: testRequest(overrides), phase: 'output', responseBody: deepFreeze(body) };
}
