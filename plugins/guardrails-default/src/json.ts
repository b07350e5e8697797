/**
 * JSON in judged text, for jsonSchema and jsonKeys. The text is tried, in order:
 * 1. whole (trimmed);
 * 2. each fenced code block (```json … ``` or any language), first one that parses;
 * 3. the span from the first `{` to the last `}` (models often wrap JSON in a sentence).
 * The first candidate that parses as JSON wins.
 */
import type { Json } from '@gateway/sdk';
import { codeBlocks } from './fences.ts';

export interface FoundJson {
  value: Json;
  from: 'text' | 'codeBlock' | 'braces';
}

function tryParse(text: string): { ok: true; value: Json } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as Json };
  } catch {
    return { ok: false };
  }
}

export function findJson(text: string | undefined): FoundJson | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const whole = tryParse(trimmed);
  if (whole.ok) return { value: whole.value, from: 'text' };
  if (trimmed.includes('```') || trimmed.includes('~~~')) {
    for (const block of codeBlocks(trimmed)) {
      const parsed = tryParse(block.code.trim());
      if (parsed.ok) return { value: parsed.value, from: 'codeBlock' };
    }
  }
  const start = trimmed.indexOf('{');
  const end = trimmed.lastIndexOf('}');
  if (start >= 0 && end > start) {
    const parsed = tryParse(trimmed.slice(start, end + 1));
    if (parsed.ok) return { value: parsed.value, from: 'braces' };
  }
  return undefined;
}
