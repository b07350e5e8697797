/**
 * The hook lists' rules beyond their schema (`ConfigFieldSet.rules` in the SDK), applied by the gateway's config
 * validation (SPEC.md "Hooks", "Guardrail entries"): the checks they name must exist and their parameters must pass
 * the check's own `validate()`; a saved guardrail (a string entry) must be one the sender may use, and is put in for
 * them; and the lists are refused on a target, because hooks run once per request, from the root config
 * (ARCHITECTURE.md: input guardrails run before routing), so a list on a target would never run.
 */
import { type FieldContext, type FieldRules, type FieldViolation, GUARDRAIL_POLICY_KEYS } from '@gateway/sdk';
import { qualifyCheckId } from './normalise.ts';
import type { CheckLookup } from './types.ts';

type Obj = Record<string, unknown>;
type Path = (string | number)[];
const isObj = (value: unknown): value is Obj => value !== null && typeof value === 'object' && !Array.isArray(value);

const ROOT_ONLY = 'hooks and guardrails apply to the whole request; set them on the root config';

/** A reason of the form `param: why` from a check's validate() is reported at `<parameters path>.param`. */
const RELATIVE = /^([A-Za-z_$][\w$-]*(?:(?:\.[A-Za-z_$][\w$-]*)|\[\d+\])*): /;
/** `words.sub[0]` → `['words', 'sub', 0]`. */
const segmentsOf = (relative: string): Path => [...relative.matchAll(/\[(\d+)\]|[^.[\]]+/g)].map((m) => (m[1] === undefined ? m[0] : Number(m[1])));

/** The violations of one check named at `at` (its id at `idAt`), with `parameters`; paths below the list's field. */
function checkViolations(lookup: CheckLookup, id: unknown, parameters: unknown, at: Path, idAt: Path): FieldViolation[] {
  if (typeof id !== 'string') return []; // the schema reports it
  const found = lookup(qualifyCheckId(id));
  if (!found) return [{ path: idAt, reason: `unknown guardrail check ${JSON.stringify(id.slice(0, 128))}` }];
  if (!isObj(parameters)) return []; // the schema reports it
  const out: FieldViolation[] = [];
  const timeout = parameters.timeout;
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0)) {
    out.push({ path: [...at, 'timeout'], reason: 'must be a positive number of milliseconds' });
  }
  if (!found.validate) return out;
  let reasons: string[];
  try {
    reasons = found.validate(parameters);
  } catch (error) {
    out.push({ path: at, reason: `parameters could not be validated (${error instanceof Error ? error.message : String(error)})` });
    return out;
  }
  for (const reason of reasons ?? []) {
    let text = String(reason);
    if (text.startsWith('parameters: ')) text = text.slice('parameters: '.length); // the parameters object itself
    const rel = RELATIVE.exec(text);
    out.push(rel ? { path: [...at, ...segmentsOf(rel[1]!)], reason: text.slice(rel[0].length) } : { path: at, reason: text });
  }
  return out;
}

/** `before_request_hooks` / `after_request_hooks`: each hook's checks. */
function hookList(lookup: CheckLookup): FieldRules {
  return {
    rootOnly: ROOT_ONLY,
    check(hooks) {
      if (!Array.isArray(hooks)) return [];
      return hooks.flatMap((hook, i) =>
        isObj(hook) && Array.isArray(hook.checks)
          ? hook.checks.flatMap((c, j) => (isObj(c) ? checkViolations(lookup, c.id, c.parameters, [i, 'checks', j, 'parameters'], [i, 'checks', j, 'id']) : []))
          : [],
      );
    },
  };
}

/** `input_guardrails` / `output_guardrails`: inline entries' checks, and saved guardrails as the sender may use them. */
function guardrailList(lookup: CheckLookup): FieldRules {
  return {
    rootOnly: ROOT_ONLY,
    check(entries, context) {
      if (!Array.isArray(entries)) return [];
      return entries.flatMap((entry, i): FieldViolation[] => {
        if (typeof entry !== 'string') return isObj(entry) ? entryViolations(lookup, entry, [i]) : [];
        const shown = JSON.stringify(entry.slice(0, 128));
        if (!context.savedGuardrail) return [{ path: [i], reason: `${shown} names a saved guardrail, and no guardrail store is loaded to resolve it` }];
        const saved = context.savedGuardrail(entry);
        if (!isObj(saved)) return [{ path: [i], reason: `no saved guardrail with id ${shown}` }];
        return entryViolations(lookup, saved, [i], entry);
      });
    },
    perSender: (entries) => Array.isArray(entries) && entries.some((entry) => typeof entry === 'string'),
    // The hook result keeps the id the config used unless the guardrail names itself: the hook engine then never
    // looks an id up without a sender.
    resolve: (entries, context: FieldContext) =>
      Array.isArray(entries)
        ? entries.map((entry: unknown) => {
            if (typeof entry !== 'string') return entry;
            const found = context.savedGuardrail?.(entry);
            return found ? { ...found, id: typeof found.id === 'string' ? found.id : entry } : entry;
          })
        : entries,
  };
}

/** An entry's checks (its keys other than policy); a saved guardrail's (`savedId`) are reported at the entry naming it. */
function entryViolations(lookup: CheckLookup, entry: Obj, at: Path, savedId?: string): FieldViolation[] {
  return Object.entries(entry).flatMap(([name, parameters]) => {
    if (GUARDRAIL_POLICY_KEYS.has(name)) return [];
    if (savedId === undefined) return checkViolations(lookup, name, parameters, [...at, name], [...at, name]);
    if (!lookup(qualifyCheckId(name))) {
      return [{ path: at, reason: `saved guardrail ${JSON.stringify(savedId)} uses unknown guardrail check ${JSON.stringify(name.slice(0, 128))}` }];
    }
    return checkViolations(lookup, name, parameters, at, at);
  });
}

/** The rules of the four lists, checking against `lookup` (the guardrail registry, complete once every plugin loaded). */
export function hookFieldRules(lookup: CheckLookup) {
  const hooks = hookList(lookup);
  const guardrails = guardrailList(lookup);
  return { before_request_hooks: hooks, after_request_hooks: hooks, input_guardrails: guardrails, output_guardrails: guardrails } as const;
}
