/**
 * What the proxy reads of A2A JSON-RPC: the methods it forwards (v0.3 names and their v1.0 equivalents), and the
 * task id and state an answer or a streamed event carries (v0.3 `kind`-tagged objects, v1.0 `task`/`statusUpdate`
 * wrappers), for the request log.
 */
export const STREAMING_METHODS: ReadonlySet<string> = new Set(['message/stream', 'tasks/resubscribe', 'SendStreamingMessage', 'SubscribeToTask']);
export const FORWARDED_METHODS: ReadonlySet<string> = new Set([
  'message/send',
  'tasks/get',
  'tasks/cancel',
  'SendMessage',
  'GetTask',
  'CancelTask',
  ...STREAMING_METHODS,
]);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);

export interface TaskSeen {
  taskId: string | null;
  state: string | null;
}

/** The task id and state of one JSON-RPC result (null fields when it names none). */
export function taskOf(result: unknown): TaskSeen {
  if (!isObj(result)) return { taskId: null, state: null };
  // v1.0 wraps the payload: { task }, { message }, { statusUpdate }, { artifactUpdate }.
  for (const key of ['task', 'statusUpdate', 'artifactUpdate', 'message'] as const) if (isObj(result[key])) return taskOf({ ...(result[key] as Obj), kind: key });
  const status = isObj(result.status) ? result.status : undefined;
  const taskId = result.kind === 'task' ? str(result.id) : str(result.taskId);
  return { taskId, state: status ? str(status.state) : null };
}

export function isObject(v: unknown): v is Obj {
  return isObj(v);
}

/**
 * The text the agent produced in an answer or a streamed event, as output guardrails judge it: its text parts,
 * leaving out the task's `history` and any message of the user (a task echoes the message it was sent).
 */
export function agentText(result: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isObj(v)) {
      if (v.role === 'user' || v.role === 'ROLE_USER') return;
      for (const [key, inner] of Object.entries(v)) {
        if (key === 'history') continue;
        if (key === 'text' && typeof inner === 'string') out.push(inner);
        else walk(inner);
      }
    }
  };
  walk(result);
  return out.join('\n');
}
