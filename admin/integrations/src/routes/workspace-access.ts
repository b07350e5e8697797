/**
 * A workspace's access to an integration as POST /integrations and PUT /integrations/:id/workspaces take it: the
 * workspace, whether it is enabled, and the workspace's `usage_limits` and `rate_limits` for the integration
 * (docs/admin/integrations.md), checked before anything is written and saved after.
 */
import { type LimitFields, type PreparedFields, prepareLimits, withLimits } from '@gateway/admin-kit';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../context.ts';
import type { AccessInput } from '../lookups.ts';

export const WorkspaceAccess = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 255 }),
    enabled: Type.Optional(Type.Boolean()),
    usage_limits: Type.Optional(Type.Unknown()),
    rate_limits: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

/** The limits the entries give, checked, each entry's workspace resolved in `access` (same order). */
export async function prepareAccessLimits(
  ctx: Ctx,
  integration: { id: string; name: string; organisation_id: string },
  access: readonly AccessInput[],
  given: readonly { usage_limits?: unknown; rate_limits?: unknown }[],
  base: string,
): Promise<PreparedFields> {
  const prepared = await Promise.all(
    access.map((a, i) =>
      prepareLimits(
        ctx.limits(),
        { kind: 'integration_workspace', id: integration.id, organisationId: integration.organisation_id, workspaceId: a.workspace.id, name: `${integration.name} in ${a.workspace.name}` },
        given[i] ?? {},
        `${base}[${i}]`,
      ),
    ),
  );
  return prepared.flat();
}

/** Access entries (by workspace `id`) shown with the workspace's limits for the integration, for the limits that are on. */
export function withAccessLimits<T extends { id: string }>(ctx: Ctx, integrationId: string, access: readonly T[]): Promise<(T & LimitFields)[]> {
  return withLimits(ctx.limits(), access, (a) => ({ kind: 'integration_workspace', id: integrationId, workspaceId: a.id }));
}
