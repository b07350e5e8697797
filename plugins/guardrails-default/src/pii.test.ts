import { describe, expect, test } from 'bun:test';
import { PII_ENTITIES, cardBrand, findPii, isCardNumber, isUkNino, isUsSsn, luhnValid, redact } from './pii.ts';

const all = new Set(PII_ENTITIES);
const redactAll = (text: string) => redact(text, findPii(text, all));

describe('Luhn and card numbers', () => {
  test('Luhn', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(luhnValid('79927398713')).toBe(true);
    expect(luhnValid('79927398710')).toBe(false);
    expect(luhnValid('')).toBe(false);
    expect(luhnValid('12a4')).toBe(false);
  });

  test('brands by prefix and length', () => {
    expect(cardBrand('4111111111111111')).toBe('visa');
    expect(cardBrand('5555555555554444')).toBe('mastercard');
    expect(cardBrand('2223003122003222')).toBe('mastercard');
    expect(cardBrand('378282246310005')).toBe('amex');
    expect(cardBrand('6011111111111117')).toBe('discover');
    expect(cardBrand('3530111333300000')).toBe('jcb');
    expect(cardBrand('30569309025904')).toBe('diners');
    expect(cardBrand('6200000000000005')).toBe('unionpay');
    expect(cardBrand('1234567812345670')).toBeUndefined(); // Luhn-valid, no issuer
    expect(isCardNumber('1234567812345670')).toBe(false);
    expect(isCardNumber('4111111111111111')).toBe(true);
  });

  test('test card numbers are redacted in every usual spelling', () => {
    for (const card of ['4111111111111111', '4111 1111 1111 1111', '4111-1111-1111-1111', '3782 822463 10005', '5555555555554444'])
      expect(redactAll(`pay with ${card} now`)).toBe('pay with [CREDIT_CARD] now');
  });

  test('random digit runs are not', () => {
    // Luhn-invalid, no issuer prefix, too short or too long, glued to letters.
    for (const text of ['order 4111111111111112', 'id 1234567812345670', 'ref 411111111111', 'n 41111111111111111111111', 'x4111111111111111'])
      expect(findPii(text, new Set(['creditCard']))).toEqual([]);
    // Of 2000 random 16-digit runs, only those that are both Luhn-valid and issuer-shaped are taken.
    let taken = 0;
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 10;
    for (let i = 0; i < 2000; i++) {
      const digits = Array.from({ length: 16 }, rand).join('');
      const spans = findPii(`n ${digits}`, new Set(['creditCard']));
      expect(spans.length > 0).toBe(isCardNumber(digits));
      taken += spans.length;
    }
    expect(taken).toBeLessThan(200); // about 10% are Luhn-valid, fewer also have an issuer prefix
  });

  test('a card followed by more digit groups is still found', () => {
    expect(redactAll('card 4111 1111 1111 1111 2029 exp')).toBe('card [CREDIT_CARD] 2029 exp');
  });
});

describe('national ids', () => {
  test('US SSN with the SSA rules', () => {
    expect(isUsSsn('123-45-6789')).toBe(true);
    expect(isUsSsn('123 45 6789')).toBe(true);
    for (const bad of ['000-12-3456', '666-12-3456', '900-12-3456', '123-00-4567', '123-45-0000', '123-45 6789'])
      expect(isUsSsn(bad)).toBe(false);
    expect(redactAll('SSN: 123-45-6789.')).toBe('SSN: [US_SSN].');
    expect(redactAll('call 123456789')).toBe('call 123456789');
  });

  test('UK National Insurance numbers with the HMRC rules', () => {
    expect(isUkNino('AB123456C')).toBe(true);
    expect(isUkNino('AB 12 34 56 C')).toBe(true);
    for (const bad of ['QQ123456C', 'DA123456A', 'AO123456A', 'GB123456A', 'AB123456E']) expect(isUkNino(bad)).toBe(false);
    expect(redactAll('NI number AB 12 34 56 C on file')).toBe('NI number [UK_NINO] on file');
    expect(redactAll('tag ab123456c')).toBe('tag ab123456c');
  });
});

describe('emails and phones', () => {
  test('emails', () => {
    expect(redactAll('write to jane.doe+news@mail.example.co.uk, thanks')).toBe('write to [EMAIL], thanks');
    expect(redactAll('not an email: a@b')).toBe('not an email: a@b');
  });

  test('phones with separators or a leading +', () => {
    for (const phone of ['(415) 555-0132', '415-555-0132', '415.555.0132', '+1 415 555 0132', '+44 20 7946 0958', '020 7946 0958', '07700 900123', '+33 1 42 68 53 00'])
      expect(redactAll(`call ${phone} today`)).toBe('call [PHONE] today');
    expect(redactAll('(call 415-555-0132)')).toBe('(call [PHONE])');
  });

  test('not phones: bare digit runs, dates, short numbers, sums', () => {
    for (const text of ['id 4155550132', 'on 2024-01-15', 'room 555-0132', '2+2=4', 'version 1.2.3'])
      expect(redactAll(text)).toBe(text);
  });
});

describe('findPii', () => {
  test('only the asked entities; spans in order; overlapping candidates resolved by priority', () => {
    const text = 'a@b.io 4111111111111111 123-45-6789';
    expect(findPii(text, new Set(['email'])).map((s) => s.entity)).toEqual(['email']);
    expect(findPii(text, all).map((s) => s.entity)).toEqual(['email', 'creditCard', 'usSsn']);
  });

  test('linear on long hostile inputs', () => {
    const inputs = ['a'.repeat(100_000), `${'a.'.repeat(50_000)}@`, '1 '.repeat(50_000), `+${'1-'.repeat(50_000)}`, '@'.repeat(100_000)];
    const started = performance.now();
    for (const text of inputs) findPii(text, all);
    expect(performance.now() - started).toBeLessThan(10_000); // a hang guard: a quadratic scan here takes minutes
  });
});
