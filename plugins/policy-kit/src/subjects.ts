/**
 * Limits set on the objects a call goes through rather than matched by conditions: its API key's, the virtual key's
 * its target names (by slug or id) and the integration workspace access's its `@slug` target uses. Found with Map
 * lookups; what one holds per object (`E`) is the limits plugin's own.
 */
import type { Attempt } from '@gateway/sdk';
import type { CallFacts } from './facts.ts';

export type SubjectKind = 'api_key' | 'virtual_key' | 'integration_workspace';

export interface SubjectOf {
  readonly kind: SubjectKind;
  readonly organisationId: string;
  /** The API key, the virtual key, or the integration. */
  readonly subjectId: string;
  /** For an integration: the workspace given access. */
  readonly workspaceId: string | null;
}

/** A virtual key's workspace and slug, by which a request may name it. */
export type VirtualKeySlugs = ReadonlyMap<string, { readonly workspaceId: string; readonly slug: string }>;

export class SubjectIndex<E> {
  private readonly apiKeys = new Map<string, E>();
  /** By virtual key id, and by `<workspace>:<slug>`; with the organisation (an id may be named from another one). */
  private readonly virtualKeys = new Map<string, { organisationId: string; entry: E }>();
  /** By `<integration>:<workspace>`. */
  private readonly integrationWorkspaces = new Map<string, E>();

  /** Indexes `entry` under its object; a virtual key also under its slug when `slugs` knows it. */
  add(subject: SubjectOf, entry: E, slugs: VirtualKeySlugs): void {
    const id = subject.subjectId;
    if (subject.kind === 'api_key') this.apiKeys.set(id, entry);
    else if (subject.kind === 'integration_workspace') this.integrationWorkspaces.set(`${id}:${subject.workspaceId}`, entry);
    else {
      const held = { organisationId: subject.organisationId, entry };
      this.virtualKeys.set(id, held);
      const vk = slugs.get(id);
      if (vk) this.virtualKeys.set(`${vk.workspaceId}:${vk.slug}`, held);
    }
  }

  /** The entries of the objects the attempt goes through: its API key's, its virtual key's, its integration workspace's. */
  of(facts: CallFacts, attempt: Attempt): E[] {
    const out: E[] = [];
    const key = this.apiKeys.get(facts.apiKeyId);
    if (key !== undefined) out.push(key);
    const vkName = attempt.target.virtual_key;
    if (typeof vkName === 'string') {
      const vk = this.virtualKeys.get(`${facts.workspaceId}:${vkName}`) ?? this.virtualKeys.get(vkName);
      if (vk && vk.organisationId === facts.organisationId) out.push(vk.entry);
    }
    if (attempt.integrationId) {
      const access = this.integrationWorkspaces.get(`${attempt.integrationId}:${facts.workspaceId}`);
      if (access !== undefined) out.push(access);
    }
    return out;
  }
}
