/** Saved guardrails a config names: string items of its root `input_guardrails` / `output_guardrails`. */

export const GUARDRAIL_LISTS = ['input_guardrails', 'output_guardrails'] as const;

export interface GuardrailRef {
  key: (typeof GUARDRAIL_LISTS)[number];
  index: number;
  /** The id or slug as written. */
  ref: string;
}

/** Validation refuses guardrail lists on targets, so the root is the only place to look. */
export function stringEntries(config: unknown): GuardrailRef[] {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return [];
  const out: GuardrailRef[] = [];
  for (const key of GUARDRAIL_LISTS) {
    const list = (config as Record<string, unknown>)[key];
    if (!Array.isArray(list)) continue;
    list.forEach((item, index) => {
      if (typeof item === 'string') out.push({ key, index, ref: item });
    });
  }
  return out;
}
