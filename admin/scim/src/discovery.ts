/** ServiceProviderConfig, ResourceTypes and Schemas (RFC 7643 §5–7): what a client reads to learn what is supported. */
import { GROUP_SCHEMA } from './groups.ts';
import { LIST_SCHEMA, USER_SCHEMA } from './users.ts';

const attr = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'string',
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

const SCHEMAS = [
  {
    id: USER_SCHEMA,
    name: 'User',
    description: 'A member of the organisation',
    attributes: [
      attr('userName', { required: true, uniqueness: 'server' }),
      attr('externalId', { caseExact: true }),
      attr('displayName'),
      attr('name', { type: 'complex', subAttributes: [attr('givenName'), attr('familyName'), attr('formatted')] }),
      attr('emails', { type: 'complex', multiValued: true, subAttributes: [attr('value'), attr('type'), attr('primary', { type: 'boolean' })] }),
      attr('active', { type: 'boolean' }),
      attr('roles', { type: 'complex', multiValued: true, subAttributes: [attr('value', { canonicalValues: ['owner', 'admin', 'member'] })] }),
      attr('groups', { type: 'complex', multiValued: true, mutability: 'readOnly', subAttributes: [attr('value'), attr('display')] }),
    ],
  },
  {
    id: GROUP_SCHEMA,
    name: 'Group',
    description: 'A group; mapped to a workspace by POST /v1/scim/workspaces',
    attributes: [
      attr('displayName', { required: true, uniqueness: 'server' }),
      attr('externalId', { caseExact: true }),
      attr('members', { type: 'complex', multiValued: true, subAttributes: [attr('value'), attr('display')] }),
    ],
  },
];

const meta = (base: string, resourceType: string, path: string) => ({ resourceType, location: `${base}/${path}` });

export function serviceProviderConfig(base: string): unknown {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    documentationUri: 'docs/admin/scim.md',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: 1000 },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      { type: 'oauthbearertoken', name: 'Bearer token', description: 'An organisation-service API key with the scim.write scope', primary: true },
    ],
    meta: meta(base, 'ServiceProviderConfig', 'ServiceProviderConfig'),
  };
}

export function resourceTypes(base: string): unknown {
  const types = [
    { schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'], id: 'User', name: 'User', endpoint: '/Users', schema: USER_SCHEMA, meta: meta(base, 'ResourceType', 'ResourceTypes/User') },
    { schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'], id: 'Group', name: 'Group', endpoint: '/Groups', schema: GROUP_SCHEMA, meta: meta(base, 'ResourceType', 'ResourceTypes/Group') },
  ];
  return { schemas: [LIST_SCHEMA], totalResults: types.length, startIndex: 1, itemsPerPage: types.length, Resources: types };
}

export function schemas(base: string): unknown {
  const all = SCHEMAS.map((s) => ({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'], ...s, meta: meta(base, 'Schema', `Schemas/${s.id}`) }));
  return { schemas: [LIST_SCHEMA], totalResults: all.length, startIndex: 1, itemsPerPage: all.length, Resources: all };
}
