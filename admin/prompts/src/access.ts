/**
 * Who may read and write prompts and partials, by their role in the prompt's workspace and the organisation's
 * security settings (SPEC.md): workspace admins (and organisation owners and admins, who are admin everywhere)
 * always; managers while `managersViewPrompts` / `managersWritePrompts` (default on); members while
 * `membersViewPrompts` (default on) / `membersWritePrompts` (default off). Without a role in the workspace a prompt is
 * as good as absent (404). Running a prompt (completions) needs a role only: it is a model call, and shows no
 * template.
 */
import type { SecuritySettings, SecuritySettingsService } from '@gateway/admin-kit';
import { type AdminRequest, Errors, type Role } from '@gateway/sdk';

export type PromptSettings = Pick<SecuritySettings, 'membersViewPrompts' | 'membersWritePrompts' | 'managersViewPrompts' | 'managersWritePrompts'>;

/** SPEC.md's defaults, in force when the settings plugin is not loaded. */
export const PROMPT_SETTING_DEFAULTS: Readonly<PromptSettings> = Object.freeze({
  membersViewPrompts: true,
  membersWritePrompts: false,
  managersViewPrompts: true,
  managersWritePrompts: true,
});

export type PromptAccess = 'run' | 'view' | 'write';

/** Whether `role` may `want` under `settings`. */
export function allows(role: Role, want: PromptAccess, settings: PromptSettings): boolean {
  if (want === 'run' || role === 'admin' || role === 'owner') return true;
  if (role === 'manager') return want === 'view' ? settings.managersViewPrompts : settings.managersWritePrompts;
  return want === 'view' ? settings.membersViewPrompts : settings.membersWritePrompts;
}

export class PromptAccessRules {
  constructor(private readonly security: () => SecuritySettingsService | undefined) {}

  async settings(organisationId: string, workspaceId: string | null): Promise<PromptSettings> {
    const service = this.security();
    return service ? service.get(organisationId, workspaceId) : PROMPT_SETTING_DEFAULTS;
  }

  /** The caller's role in the workspace, when it allows `want`; 404 without a role, 403 when the settings say no. */
  async require(req: AdminRequest, workspaceId: string, want: PromptAccess, missing: string): Promise<Role> {
    const role = await req.principal.workspaceRole(workspaceId);
    if (!role) throw Errors.notFound(missing);
    if (allows(role, want, await this.settings(req.caller.organisationId, workspaceId))) return role;
    throw Errors.forbidden(`${want === 'view' ? 'Viewing' : 'Writing'} prompts is not open to workspace ${role}s in this organisation (security settings)`);
  }
}
