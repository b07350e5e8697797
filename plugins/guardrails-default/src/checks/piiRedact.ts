/**
 * `default.piiRedact` {entities?=all, failOnDetection?=false}: a transformer that replaces personal data with labels
 * (`[EMAIL]`, `[PHONE]`, `[CREDIT_CARD]`, `[US_SSN]`, `[UK_NINO]`; what each covers is in pii.ts) in the phase's
 * texts: input, every message of every role (or every prompt / input string); output, every choice (text.ts).
 * Tool-call arguments and non-text parts are not scanned.
 *
 * Passes, with the redacted body in `transformed` when anything was found; `failOnDetection: true` fails the verdict
 * when anything was found (the redacted body is still returned). `data.found` counts findings per entity and
 * `data.fields` says where; the values found are never put in `data`.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { PII_ENTITIES, type PiiEntity, findPii, redact } from '../pii.ts';
import { mapTexts } from '../text.ts';

const Entity = Type.Union(PII_ENTITIES.map((e) => Type.Literal(e)));

export const piiRedact = defineCheck({
  name: 'piiRedact',
  schema: Type.Object(
    {
      entities: Type.Optional(Type.Array(Entity, { minItems: 1 })),
      failOnDetection: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  run(ctx, p) {
    const entities = new Set<PiiEntity>(p.entities ?? PII_ENTITIES);
    const found: Partial<Record<PiiEntity, number>> = {};
    const fields: string[] = [];
    const { body } = mapTexts(ctx, (text, where) => {
      const spans = findPii(text, entities);
      if (spans.length === 0) return text;
      for (const s of spans) found[s.entity] = (found[s.entity] ?? 0) + 1;
      fields.push(where);
      return redact(text, spans);
    });
    const total = Object.values(found).reduce((a, b) => a + b, 0);
    return {
      verdict: !(total > 0 && (p.failOnDetection ?? false)),
      ...(body ? { transformed: body } : {}),
      data: {
        found,
        total,
        fields,
        explanation: total > 0 ? `Redacted ${total} item(s) of personal data.` : 'No personal data found.',
      },
    };
  },
});
