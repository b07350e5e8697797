/** Saved configs as the API answers them: secrets masked (they are stored masked), times in ISO 8601. */
import { iso } from '@gateway/admin-kit';
import type { Json, Row } from '@gateway/sdk';
import type { savedConfigs, savedConfigVersions } from './tables.ts';

export type ConfigRow = Row<typeof savedConfigs>;
export type VersionRow = Row<typeof savedConfigVersions>;

export interface ConfigView {
  object: 'config';
  id: string;
  name: string;
  slug: string;
  organisation_id: string;
  workspace_id: string;
  is_default: boolean;
  /** The version shown: the current one unless `?version=n` asked for another. */
  version: number;
  current_version: number;
  config: Json;
  created_at: string | null;
  updated_at: string | null;
}

export function presentConfig(row: ConfigRow, version?: VersionRow): ConfigView {
  return {
    object: 'config',
    id: row.id,
    name: row.name,
    slug: row.slug,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    is_default: row.is_default,
    version: version?.version ?? row.version,
    current_version: row.version,
    config: version?.config ?? row.config,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function presentVersion(row: VersionRow) {
  return {
    object: 'config_version' as const,
    config_id: row.config_id,
    version: row.version,
    config: row.config,
    created_at: iso(row.created_at),
    created_by: { api_key_id: row.created_by_key, user_id: row.created_by_user },
  };
}
