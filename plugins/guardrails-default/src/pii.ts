/**
 * PII detection for `default.piiRedact`. Patterns run on re2js (linear time); every candidate is then checked in code,
 * so that random digit runs are not taken for card numbers or identifiers.
 *
 * Entities (and the label that replaces them):
 * - `email` → `[EMAIL]`: local@domain.tld (ASCII; the top-level label alphabetic, 2+ letters).
 * - `phone` → `[PHONE]`: international numbers written with a leading `+` (8–15 digits, spaces, dots, dashes,
 *   parentheses allowed); North-American numbers written with separators (`(415) 555-0132`, `415-555-0132`,
 *   `+1 415 555 0132`); UK numbers starting with 0 written in groups (`020 7946 0958`, `07700 900123`). A bare run of
 *   digits is never taken for a phone number.
 * - `creditCard` → `[CREDIT_CARD]`: 13–19 digits, alone or in groups separated by single spaces or dashes, that pass the
 *   Luhn checksum AND start with a known issuer prefix of the right length (Visa, Mastercard, American Express,
 *   Discover, Diners Club, JCB, UnionPay, Maestro). A run of groups longer than a card (a card followed by a year, say)
 *   is searched for a card-sized window of whole groups.
 * - `usSsn` → `[US_SSN]`: US Social Security numbers written `AAA-GG-SSSS` or `AAA GG SSSS` (same separator twice), with
 *   the SSA's rules: area not 000, 666 or 900–999, group not 00, serial not 0000. Nine digits without separators are
 *   not taken.
 * - `ukNino` → `[UK_NINO]`: UK National Insurance numbers, upper case, `AB123456C` or `AB 12 34 56 C`, with HMRC's
 *   prefix rules (first letter not D F I Q U V, second not D F I O Q U V, not BG GB KN NK NT TN ZZ), suffix A–D.
 * A match must not touch a letter or digit on either side. Where two entities overlap, the one earlier in the list
 * creditCard, usSsn, ukNino, email, phone wins.
 */
import type { RE2JS } from 're2js';
import { re2 } from './regex.ts';

export const PII_ENTITIES = ['email', 'phone', 'creditCard', 'usSsn', 'ukNino'] as const;
export type PiiEntity = (typeof PII_ENTITIES)[number];

export const PII_LABELS: Record<PiiEntity, string> = {
  email: '[EMAIL]',
  phone: '[PHONE]',
  creditCard: '[CREDIT_CARD]',
  usSsn: '[US_SSN]',
  ukNino: '[UK_NINO]',
};

export interface PiiSpan {
  entity: PiiEntity;
  start: number;
  end: number;
}

/** A pattern compiled on first use: re2js is loaded by the first PII check, not at start (regex.ts). */
function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

const ALNUM = /[\p{L}\p{N}]/u;
const digitsOf = (s: string) => s.replace(/\D/g, '');

/** True when the characters just outside [start, end) are not letters or digits. */
function isolated(text: string, start: number, end: number): boolean {
  const before = start > 0 ? text[start - 1] : undefined;
  const after = end < text.length ? text[end] : undefined;
  return !(before && ALNUM.test(before)) && !(after && ALNUM.test(after));
}

function* matches(re: RE2JS, text: string): Generator<{ start: number; end: number; value: string }> {
  const m = re.matcher(text);
  while (m.find()) yield { start: m.start(), end: m.end(), value: m.group() as string };
}

// ---- credit cards -------------------------------------------------------------------------------------------

export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

const between = (digits: string, len: number, lo: number, hi: number) => {
  const n = Number(digits.slice(0, len));
  return n >= lo && n <= hi;
};

/** The card network whose issuer prefix and length fit, if any. */
export function cardBrand(digits: string): string | undefined {
  const n = digits.length;
  const p = (prefix: string) => digits.startsWith(prefix);
  if (p('4') && (n === 13 || n === 16 || n === 19)) return 'visa';
  if ((between(digits, 2, 51, 55) || between(digits, 4, 2221, 2720)) && n === 16) return 'mastercard';
  if ((p('34') || p('37')) && n === 15) return 'amex';
  if ((p('6011') || p('65') || between(digits, 3, 644, 649)) && n >= 16 && n <= 19) return 'discover';
  if ((between(digits, 3, 300, 305) || p('36') || p('38') || p('39')) && n >= 14 && n <= 19) return 'diners';
  if (between(digits, 4, 3528, 3589) && n >= 16 && n <= 19) return 'jcb';
  if (p('62') && n >= 16 && n <= 19) return 'unionpay';
  if (['5018', '5020', '5038', '5893', '6304', '6759', '6761', '6762', '6763'].some(p) && n >= 13 && n <= 19) return 'maestro';
  return undefined;
}

export function isCardNumber(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && luhnValid(digits) && cardBrand(digits) !== undefined;
}

const DIGIT_RUN = lazy(() => re2().compile('\\d(?:[ -]?\\d)*'));

function findCards(text: string, out: PiiSpan[]): void {
  for (const run of matches(DIGIT_RUN(), text)) {
    if (!isolated(text, run.start, run.end)) continue;
    // Groups of digits with their offsets inside the run.
    const groups: { start: number; end: number }[] = [];
    let g = -1;
    for (let i = 0; i < run.value.length; i++) {
      const isDigit = run.value.charCodeAt(i) >= 48 && run.value.charCodeAt(i) <= 57;
      if (isDigit && g < 0) g = i;
      if (!isDigit && g >= 0) {
        groups.push({ start: g, end: i });
        g = -1;
      }
    }
    if (g >= 0) groups.push({ start: g, end: run.value.length });
    for (let i = 0; i < groups.length; ) {
      let found = -1;
      // The longest window of whole groups starting at group i that is a card.
      let total = 0;
      const sizes: number[] = [];
      for (let j = i; j < groups.length; j++) {
        const group = groups[j] as { start: number; end: number };
        total += group.end - group.start;
        if (total > 19) break;
        sizes.push(total);
        if (total >= 13) {
          const span = run.value.slice((groups[i] as { start: number }).start, group.end);
          if (isCardNumber(digitsOf(span))) found = j;
        }
      }
      if (found >= 0) {
        out.push({ entity: 'creditCard', start: run.start + (groups[i] as { start: number }).start, end: run.start + (groups[found] as { end: number }).end });
        i = found + 1;
      } else i++;
    }
  }
}

// ---- national ids -------------------------------------------------------------------------------------------

const SSN = lazy(() => re2().compile('\\d{3}([- ])\\d{2}([- ])\\d{4}'));

export function isUsSsn(value: string): boolean {
  const m = /^(\d{3})([- ])(\d{2})([- ])(\d{4})$/.exec(value);
  if (!m || m[2] !== m[4]) return false;
  const area = Number(m[1]);
  return area !== 0 && area !== 666 && area < 900 && m[3] !== '00' && m[5] !== '0000';
}

const NINO = lazy(() => re2().compile('[A-Z]{2} ?\\d{2} ?\\d{2} ?\\d{2} ?[A-D]'));
const NINO_BAD_PREFIX = new Set(['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ']);

export function isUkNino(value: string): boolean {
  const compact = value.replace(/ /g, '');
  if (!/^[A-Z]{2}\d{6}[A-D]$/.test(compact)) return false;
  const [a, b] = [compact[0] as string, compact[1] as string];
  return !'DFIQUV'.includes(a) && !'DFIOQUV'.includes(b) && !NINO_BAD_PREFIX.has(a + b);
}

// ---- email and phone ----------------------------------------------------------------------------------------

const EMAIL = lazy(() =>
  re2().compile(
    "[A-Za-z0-9._%+'-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\\.[A-Za-z]{2,63}",
  ),
);

const PHONES = lazy(() => [
  // international, leading +
  re2().compile('\\+\\d{1,3}(?:[ .-]?\\(?\\d{1,5}\\)?){1,6}'),
  // North America with separators
  re2().compile('(?:\\+?1[ .-]?)?(?:\\(\\d{3}\\)[ .-]?|\\d{3}[ .-])\\d{3}[ .-]\\d{4}'),
  // UK, leading 0, in groups
  re2().compile('0\\d{2,4}(?:[ -]\\d{2,6}){1,3}'),
]);

function phoneOk(value: string): boolean {
  const digits = digitsOf(value).length;
  if (value.startsWith('+')) return digits >= 8 && digits <= 15;
  return digits >= 10 && digits <= 11;
}

// ---- all together -------------------------------------------------------------------------------------------

/** Every PII span in `text` for the given entities, in text order, non-overlapping. */
export function findPii(text: string, entities: ReadonlySet<PiiEntity>): PiiSpan[] {
  const spans: PiiSpan[] = [];
  // Characters already claimed by an earlier (higher-priority) span; checking a span costs its length.
  const claimed = new Uint8Array(text.length);
  const add = (entity: PiiEntity, start: number, end: number) => {
    for (let i = start; i < end; i++) if (claimed[i]) return;
    claimed.fill(1, start, end);
    spans.push({ entity, start, end });
  };
  const hasDigit = /\d/.test(text);
  if (entities.has('creditCard') && hasDigit) {
    const cards: PiiSpan[] = [];
    findCards(text, cards);
    for (const c of cards) add(c.entity, c.start, c.end);
  }
  if (entities.has('usSsn') && hasDigit)
    for (const m of matches(SSN(), text)) if (isolated(text, m.start, m.end) && isUsSsn(m.value)) add('usSsn', m.start, m.end);
  if (entities.has('ukNino') && hasDigit)
    for (const m of matches(NINO(), text)) if (isolated(text, m.start, m.end) && isUkNino(m.value)) add('ukNino', m.start, m.end);
  if (entities.has('email') && text.includes('@'))
    for (const m of matches(EMAIL(), text)) add('email', m.start, m.end);
  if (entities.has('phone') && hasDigit)
    for (const re of PHONES())
      for (const m of matches(re, text)) {
        // A trailing ")" with no "(" is sentence punctuation, not part of the number.
        let end = m.end;
        if (text[end - 1] === ')' && !m.value.includes('(')) end--;
        const value = text.slice(m.start, end);
        if (isolated(text, m.start, end) && phoneOk(value)) add('phone', m.start, end);
      }
  return spans.sort((a, b) => a.start - b.start);
}

/** The text with every span replaced by its entity's label. */
export function redact(text: string, spans: readonly PiiSpan[]): string {
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start) + PII_LABELS[s.entity];
    at = s.end;
  }
  return out + text.slice(at);
}
