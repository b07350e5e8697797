/**
 * In-process events between administration plugins (service `adminEvents`, provided by the identity plugin): a
 * member joined a workspace (the api-keys plugin may create their default key), a member left (their user keys
 * go). Listeners run after the change is stored; a listener's failure is logged by the emitter, not thrown.
 */
export interface AdminEventMap {
  /**
   * `via`: how the membership came to be. `callerUserId`: the user the route's answer goes to (its caller's user;
   * for an accepted invitation, the user who accepted it), null for none: a secret made for the member goes into
   * that answer only when it is the member.
   */
  'member.added': {
    organisationId: string;
    workspaceId: string;
    userId: string;
    role: string;
    via: 'join' | 'invite' | 'scim' | 'direct';
    callerUserId: string | null;
  };
  /** workspaceId null: removed from the organisation (and so from every workspace). */
  'member.removed': { organisationId: string; workspaceId: string | null; userId: string; via: 'direct' | 'scim' };
  'workspace.archived': { organisationId: string; workspaceId: string };
  /** A workspace's `defaults` were set or changed (the workspace-defaults snapshot reloads). */
  'workspace.defaults_changed': { organisationId: string; workspaceId: string };
}

/**
 * A key auto-created for a new member. `key`, the secret, only when the answer goes to the member themselves;
 * otherwise `pending_secret` is true and the member picks the secret up once, on a call of their own.
 */
export interface IssuedMemberKey {
  id: string;
  workspace_id: string;
  user_id: string;
  pending_secret: boolean;
  key?: string;
}

/** What a listener may give back to the emitter: the key auto-created for a new member. */
export interface AdminEventResults {
  'member.added': { api_key?: IssuedMemberKey };
  'member.removed': Record<string, never>;
  'workspace.archived': Record<string, never>;
  'workspace.defaults_changed': Record<string, never>;
}

export type AdminEventName = keyof AdminEventMap;
type Listener<K extends AdminEventName> = (event: AdminEventMap[K]) => Promise<AdminEventResults[K] | void> | AdminEventResults[K] | void;

export class AdminEvents {
  private readonly listeners = new Map<AdminEventName, Listener<AdminEventName>[]>();

  constructor(private readonly onError: (name: AdminEventName, error: unknown) => void = () => {}) {}

  on<K extends AdminEventName>(name: K, listener: Listener<K>): void {
    const list = this.listeners.get(name) ?? [];
    list.push(listener as unknown as Listener<AdminEventName>);
    this.listeners.set(name, list);
  }

  /**
   * Runs every listener in turn and waits for them, so an answer reflects what they did (a created key); resolves
   * to what they gave back.
   */
  async emit<K extends AdminEventName>(name: K, event: AdminEventMap[K]): Promise<AdminEventResults[K][]> {
    const results: AdminEventResults[K][] = [];
    for (const listener of this.listeners.get(name) ?? []) {
      try {
        const result = await (listener as unknown as Listener<K>)(event);
        if (result) results.push(result);
      } catch (error) {
        this.onError(name, error);
      }
    }
    return results;
  }
}
