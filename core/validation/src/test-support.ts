/** Shared helpers of the tests: run a body through validateBody and table-driven rule cases. */
import { describe, expect, test } from 'bun:test';
import { GatewayError } from '@gateway/sdk';
import { validateBody, type BodyEndpoint } from './index.ts';

export type Patch = Record<string, unknown>;

export interface Rejection {
  status: number;
  code: string;
  param: string | null;
  message: string;
}

/** The 400 a body gets, or undefined when it passes. Anything but a GatewayError fails the test. */
export function rejection(endpoint: BodyEndpoint, body: unknown): Rejection | undefined {
  try {
    validateBody(endpoint, body);
    return undefined;
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { status: error.status, code: error.code, param: error.param, message: error.message };
  }
}

/** Base body with the patch applied; a patch value of undefined removes the field. */
export function withPatch(base: Patch, patch: Patch): Patch {
  const body: Patch = structuredClone(base);
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) delete body[key];
    else body[key] = value;
  }
  return body;
}

/** [patch, expected param, expected reason (optional: then only the `param: ` prefix is checked)] */
export type FailCase = readonly [Patch, string, string?];

export interface Rule {
  readonly pass: readonly Patch[];
  readonly fail: readonly FailCase[];
}

/** One describe block per endpoint, one test per rule with its passing and failing bodies. */
export function ruleSuite(endpoint: BodyEndpoint, base: Patch, rules: Record<string, Rule>): void {
  describe(`${endpoint} rules`, () => {
    test('the base body passes', () => {
      expect(rejection(endpoint, base)).toBeUndefined();
    });
    for (const [name, rule] of Object.entries(rules)) {
      test(name, () => {
        for (const patch of rule.pass) {
          expect({ patch, result: rejection(endpoint, withPatch(base, patch)) }).toEqual({ patch, result: undefined });
        }
        for (const [patch, param, reason] of rule.fail) {
          const result = rejection(endpoint, withPatch(base, patch));
          expect({ patch, status: result?.status, param: result?.param }).toEqual({ patch, status: 400, param });
          expect(result!.code).toBe('invalid_request');
          if (reason !== undefined) expect(result!.message).toBe(`${param}: ${reason}`);
          else expect(result!.message.startsWith(`${param}: `)).toBe(true);
        }
      });
    }
  });
}
