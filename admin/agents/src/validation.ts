/** Body pieces shared by the routes, and the URL rule. */
import { Errors } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';

export const Name = Type.String({ minLength: 1, maxLength: 255 });
export const Slug = Type.String({ minLength: 1, maxLength: 64 });
export const Url = Type.String({ minLength: 1, maxLength: 2048 });
export const Id = Type.String({ minLength: 1, maxLength: 255 });
export const Description = Type.Union([Type.String({ maxLength: 4096 }), Type.Null()]);
export const Auth = Type.Union([
  Type.Object({ type: Type.Literal('none') }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal('header'),
      header_name: Type.String({ minLength: 1, maxLength: 255, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" }),
      header_value: Type.String({ minLength: 1, maxLength: 8192 }),
    },
    { additionalProperties: false },
  ),
  /** Each user enters their own value of the header (POST /agent-servers/:id/connections). */
  Type.Object(
    { type: Type.Literal('user_token'), header_name: Type.String({ minLength: 1, maxLength: 255, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" }) },
    { additionalProperties: false },
  ),
]);
export const Mappings = Type.Array(
  Type.Object(
    {
      target_field: Type.String({ minLength: 1, maxLength: 255 }),
      secret_reference_id: Type.String({ minLength: 1, maxLength: 255 }),
      secret_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      value_format: Type.Optional(Type.Union([Type.Literal('string'), Type.Literal('json')])),
    },
    { additionalProperties: false },
  ),
  { maxItems: 32 },
);

export function checkHttpUrl(value: string, param: string): void {
  const parsed = URL.canParse(value) ? new URL(value) : undefined;
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.hostname === '') throw Errors.badRequest(`${param} must be an http(s) URL`, param);
}
