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
]);

export function checkHttpUrl(value: string, param: string): void {
  const parsed = URL.canParse(value) ? new URL(value) : undefined;
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.hostname === '') throw Errors.badRequest(`${param} must be an http(s) URL`, param);
}
