/** A key as the administration API shows it: never the secret, its hash, or a sealed pending secret. */
import { iso } from '@gateway/admin-kit';
import type { ApiKeyType } from '@gateway/sdk';
import { periodOfDays, type RotationPolicyView } from './policy.ts';
import type { ApiKeyRow } from './tables.ts';

export interface ApiKeyView {
  object: 'api_key';
  id: string;
  name: string;
  description: string | null;
  type: ApiKeyType;
  organisation_id: string;
  workspace_id: string | null;
  user_id: string | null;
  scopes: string[];
  status: 'active' | 'revoked';
  /** The first characters of the secret, to recognise it. */
  prefix_hint: string;
  expires_at: string | null;
  created_at: string | null;
  updated_at: string | null;
  last_used_at: string | null;
  last_reset_at: string | null;
  last_rotated_at: string | null;
  rotation_policy: RotationPolicyView | null;
  next_rotation_at: string | null;
  rotation_period_days: number | null;
  /** When the secret replaced by the last rotation stops working; null when none is in its transition. */
  key_transition_expires_at: string | null;
  /** A scheduled rotation's new secret waits to be picked up with POST /api-keys/:id/reveal. */
  pending_secret: boolean;
}

export function view(row: ApiKeyRow, now: number): ApiKeyView {
  const period = periodOfDays(row.rotation_period_days);
  return {
    object: 'api_key',
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    user_id: row.user_id,
    scopes: row.scopes,
    status: row.status,
    prefix_hint: row.prefix_hint,
    expires_at: iso(row.expires_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    last_used_at: iso(row.last_used_at),
    last_reset_at: iso(row.last_reset_at),
    last_rotated_at: iso(row.last_rotated_at),
    rotation_policy:
      period === null
        ? null
        : { rotation_period: period, next_rotation_at: iso(row.next_rotation_at), key_transition_period_ms: row.key_transition_period_ms },
    next_rotation_at: iso(row.next_rotation_at),
    rotation_period_days: row.rotation_period_days,
    key_transition_expires_at: row.previous_hash !== null && row.previous_expires_at !== null && row.previous_expires_at > now ? iso(row.previous_expires_at) : null,
    pending_secret: row.pending_secret !== null,
  };
}
