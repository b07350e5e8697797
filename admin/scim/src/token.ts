/**
 * The SCIM bearer token: an organisation-service API key of the organisation with the `scim.write` scope (docs/admin/
 * scim.md). Made like any key (POST /v1/api-keys), so it is hashed, rotated, revoked and audited as keys are. Refusals
 * are SCIM error bodies (401), which is what Entra ID and Okta show their admins.
 */
import { ALL_SCOPES, type Caller, type KeyVerifier } from '@gateway/sdk';
import { ScimError } from './scim-errors.ts';

export const SCIM_SCOPE = 'scim.write';

export async function scimCaller(headers: Headers, verifier: KeyVerifier | undefined): Promise<Caller> {
  const auth = headers.get('authorization') ?? '';
  const token = /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, '').trim() : '';
  if (!token) throw new ScimError(401, 'Send the SCIM token as Authorization: Bearer <token>');
  if (!verifier) throw new ScimError(503, 'No API-key verifier is loaded');
  const caller = verifier.peek?.(token) ?? (await verifier.verify(token));
  if (!caller) throw new ScimError(401, 'Invalid, revoked or expired SCIM token');
  if (caller.keyType !== 'organisation-service') throw new ScimError(403, 'The SCIM token must be an organisation-service API key');
  if (!caller.scopes.includes(SCIM_SCOPE) && !caller.scopes.includes(ALL_SCOPES)) throw new ScimError(403, `The SCIM token needs the ${SCIM_SCOPE} scope`);
  return caller;
}
