/**
 * The running order of the stages, decided once at start-up from what each stage names: `before` and `after` list
 * stages of the same phase by name (for attempt stages, `before` is outside: it runs first and sees the other's
 * result). Stages that name nothing keep their registration order, and so does any pair the relations leave free.
 * A name that no loaded stage has is ignored (its plugin may be disabled or not installed); a name of a stage of
 * another phase, or relations that go round in a cycle, stop the start with an error naming the stages.
 */
import type { AttemptStage, FinallyStage, RequestStage, ResponseStage, Stage, ToolCallStage } from '@gateway/sdk';

export interface OrderedStages {
  requestStages: readonly RequestStage[];
  attemptStages: readonly AttemptStage[];
  responseStages: readonly ResponseStage[];
  finallyStages: readonly FinallyStage[];
  /** The tool-call phase's stages (tool-calls.ts), which the proxies of tool and agent calls run. */
  toolCallStages: readonly ToolCallStage[];
}

const listed = (names: string | readonly string[] | undefined): readonly string[] =>
  names === undefined ? [] : typeof names === 'string' ? [names] : names;

/** The stages of one phase (in registration order) in running order. */
function orderPhase<T extends Stage>(stages: readonly T[], phaseOf: ReadonlyMap<string, string>): T[] {
  const positions = new Map<string, number[]>();
  stages.forEach((stage, i) => positions.set(stage.name, [...(positions.get(stage.name) ?? []), i]));
  const runsBefore: number[][] = stages.map(() => []);
  const waitingFor = stages.map(() => 0);
  const relate = (stage: T, name: string, link: (other: number) => void) => {
    const found = positions.get(name);
    if (found) return found.forEach(link);
    const phase = phaseOf.get(name);
    if (phase !== undefined)
      throw new Error(`stage "${stage.name}" (${stage.phase}) is ordered against "${name}", a stage of phase ${phase}: order holds within a phase`);
  };
  stages.forEach((stage, i) => {
    const first = (from: number, to: number) => {
      runsBefore[from]?.push(to);
      waitingFor[to] = (waitingFor[to] ?? 0) + 1;
    };
    for (const name of listed(stage.before)) relate(stage, name, (other) => first(i, other));
    for (const name of listed(stage.after)) relate(stage, name, (other) => first(other, i));
  });

  // Kahn's algorithm, always taking the earliest registered stage that waits for nothing: stable, O(n²) once.
  const out: T[] = [];
  const placed = stages.map(() => false);
  while (out.length < stages.length) {
    const next = stages.findIndex((_, i) => !placed[i] && waitingFor[i] === 0);
    if (next < 0) {
      const cycle = stages.filter((_, i) => !placed[i]).map((s) => `"${s.name}"`);
      throw new Error(`the ${stages[0]?.phase} stages ${cycle.join(', ')} are ordered in a cycle by their before/after`);
    }
    placed[next] = true;
    out.push(stages[next] as T);
    for (const later of runsBefore[next] ?? []) waitingFor[later] = (waitingFor[later] ?? 0) - 1;
  }
  return out;
}

/** Every registered stage (in registration order), split by phase and put in running order. Throws on a bad order. */
export function orderStages(stages: readonly Stage[]): OrderedStages {
  const phaseOf = new Map(stages.map((s) => [s.name, s.phase]));
  return {
    requestStages: orderPhase(stages.filter((s): s is RequestStage => s.phase === 'request'), phaseOf),
    attemptStages: orderPhase(stages.filter((s): s is AttemptStage => s.phase === 'attempt'), phaseOf),
    responseStages: orderPhase(stages.filter((s): s is ResponseStage => s.phase === 'response'), phaseOf),
    finallyStages: orderPhase(stages.filter((s): s is FinallyStage => s.phase === 'finally'), phaseOf),
    toolCallStages: orderPhase(stages.filter((s): s is ToolCallStage => s.phase === 'toolCall'), phaseOf),
  };
}
