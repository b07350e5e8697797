/** SCIM error bodies (RFC 7644 §3.12): what Entra ID and Okta read, not the gateway's own error shape. */
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimType = 'invalidFilter' | 'invalidSyntax' | 'invalidPath' | 'invalidValue' | 'uniqueness' | 'mutability' | 'noTarget';

/** A refusal a handler throws; the router answers it as a SCIM error body. */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly scimType?: ScimType,
  ) {
    super(detail);
  }

  toResponse(): Response {
    const body: Record<string, unknown> = { schemas: [ERROR_SCHEMA], status: String(this.status), detail: this.detail };
    if (this.scimType) body.scimType = this.scimType;
    return new Response(JSON.stringify(body), { status: this.status, headers: { 'content-type': 'application/scim+json' } });
  }
}

export const badValue = (detail: string) => new ScimError(400, detail, 'invalidValue');
export const notFound = (what: string) => new ScimError(404, `${what} not found`);

/** A SCIM answer. */
export function scimJson(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/scim+json' } });
}
