/**
 * Request bodies of the /api-keys routes, compiled once. Enumerations and the nested rotation policy are checked
 * here by hand so that a 400 names the exact field (`rotation_policy.rotation_period`) and the values allowed;
 * dates and references are checked by the handlers.
 */
import { validator } from '@gateway/admin-kit';
import { API_KEY_TYPES, type ApiKeyType, Errors, GatewayError } from '@gateway/sdk';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { MIN_TRANSITION_MS, type RotationPolicyInput } from './policy.ts';

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Description = Type.Union([Type.String({ maxLength: 1024 }), Type.Null()]);
const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 500, uniqueItems: true });
const Instant = Type.Union([Type.String({ minLength: 10, maxLength: 40 }), Type.Null()]);
const TransitionMs = Type.Integer({ minimum: MIN_TRANSITION_MS, maximum: 365 * 86_400_000 });

const RotationPolicy = Type.Object(
  {
    rotation_period: Type.Optional(Type.String()),
    next_rotation_at: Type.Optional(Type.String({ minLength: 10, maxLength: 40 })),
    key_transition_period_ms: Type.Optional(TransitionMs),
  },
  { additionalProperties: false },
);

const Create = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    type: Type.String(),
    workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 36 })),
    scopes: Scopes,
    expires_at: Type.Optional(Instant),
    rotation_policy: Type.Optional(Type.Unknown()),
    usage_limits: Type.Optional(Type.Unknown()),
    rate_limits: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const Update = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    scopes: Type.Optional(Scopes),
    expires_at: Type.Optional(Instant),
    rotation_policy: Type.Optional(Type.Unknown()),
    usage_limits: Type.Optional(Type.Unknown()),
    rate_limits: Type.Optional(Type.Unknown()),
    status: Type.Optional(Type.String()),
  },
  { additionalProperties: false, minProperties: 1 },
);

const Rotate = Type.Object({ key_transition_period_ms: Type.Optional(TransitionMs) }, { additionalProperties: false });

const createBody = validator(Create);
const updateBody = validator(Update);
const rotateBody = validator(Rotate);
const policyBody = validator(RotationPolicy);

function oneOf<T extends string>(value: string, allowed: readonly T[], param: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw Errors.badRequest(`${param} must be one of ${allowed.join(', ')}`, param);
  return value as T;
}

/** The policy object, null, or undefined; errors name `rotation_policy.<field>`. */
function rotationPolicy(value: unknown): RotationPolicyInput | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== 'object' || Array.isArray(value)) throw Errors.badRequest('rotation_policy must be an object or null', 'rotation_policy');
  let body: Static<typeof RotationPolicy>;
  try {
    body = policyBody(value);
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    throw Errors.badRequest(error.message.replaceAll('body.', 'body.rotation_policy.'), error.param ? `rotation_policy.${error.param}` : 'rotation_policy');
  }
  const { rotation_period, ...rest } = body;
  return rotation_period === undefined ? rest : { ...rest, rotation_period: oneOf(rotation_period, ['weekly', 'monthly'] as const, 'rotation_policy.rotation_period') };
}

type Parsed<S extends TSchema, Extra> = Omit<Static<S>, keyof Extra> & Extra;

export function checkCreate(body: unknown): Parsed<typeof Create, { type: ApiKeyType; rotation_policy?: RotationPolicyInput | null }> {
  const parsed = createBody(body);
  return { ...parsed, type: oneOf(parsed.type, API_KEY_TYPES, 'type'), rotation_policy: rotationPolicy(parsed.rotation_policy) };
}

export function checkUpdate(body: unknown): Parsed<typeof Update, { status?: 'active' | 'revoked'; rotation_policy?: RotationPolicyInput | null }> {
  const parsed = updateBody(body);
  return {
    ...parsed,
    status: parsed.status === undefined ? undefined : oneOf(parsed.status, ['active', 'revoked'] as const, 'status'),
    rotation_policy: rotationPolicy(parsed.rotation_policy),
  };
}

/** The body is optional: a rotation without one uses the key's transition period. */
export function checkRotate(body: unknown): Static<typeof Rotate> {
  return rotateBody(body ?? {});
}
