/** Field schemas shared by several endpoints. */
import { Type, type TSchema } from '@sinclair/typebox';

/** Unknown fields pass through to the provider untouched. */
export const OPEN = { additionalProperties: true } as const;

/**
 * An optional field that also accepts null as "not set": OpenAI's own schema marks these fields nullable and
 * common clients send `null` rather than leaving the field out.
 */
export const nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

export const Penalty = Type.Number({ minimum: -2, maximum: 2 });
/** Keys are token ids as strings; providers disagree on their form, so only the bias values are checked. */
export const LogitBias = Type.Record(Type.String(), Type.Number({ minimum: -100, maximum: 100 }));
export const TokenCount = Type.Integer({ minimum: 0 });
export const N = Type.Integer({ minimum: 1, maximum: 128 });
/** The provider's int64 range; exact only to a double, which is all JSON.parse gives anyway. */
export const Seed = Type.Integer({ minimum: -(2 ** 63), maximum: 2 ** 63 });
export const Stop = Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 })], {
  description: 'a string or an array of at most 4 strings',
});
export const Temperature = Type.Number({ minimum: 0, maximum: 2 });
export const TopP = Type.Number({ minimum: 0, maximum: 1 });
/** Inner shape not in SPEC; only "an object, and only with stream true" (checked in each crossCheck). */
export const StreamOptions = Type.Object({}, OPEN);

export const STREAM_OPTIONS_NEED_STREAM = { param: 'stream_options', reason: 'only allowed when stream is true' };
