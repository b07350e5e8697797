import { describe, expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import { input, output } from '../testing.ts';
import { piiRedact } from './piiRedact.ts';

const texts = (body: JsonObject | undefined) => (body?.messages as JsonObject[]).map((m) => m.content);

describe('default.piiRedact', () => {
  test('redacts every message, reports what was found without the values', async () => {
    const ctx = input({
      messages: [
        { role: 'system', content: 'Support agent for jane@corp.example' },
        { role: 'user', content: [{ type: 'text', text: 'My card is 4111 1111 1111 1111 and SSN 123-45-6789.' }, { type: 'image_url', image_url: { url: 'u' } }] },
        { role: 'user', content: 'Call me on +44 20 7946 0958, NI AB123456C.' },
      ],
    });
    const r = await piiRedact.run(ctx, {});
    expect(r.verdict).toBe(true);
    expect(texts(r.transformed)).toEqual([
      'Support agent for [EMAIL]',
      [{ type: 'text', text: 'My card is [CREDIT_CARD] and SSN [US_SSN].' }, { type: 'image_url', image_url: { url: 'u' } }],
      'Call me on [PHONE], NI [UK_NINO].',
    ]);
    expect(r.data).toMatchObject({ found: { email: 1, creditCard: 1, usSsn: 1, phone: 1, ukNino: 1 }, total: 5 });
    expect(JSON.stringify(r.data)).not.toContain('4111');
    expect(JSON.stringify(ctx.request.body)).toContain('4111 1111 1111 1111');
  });

  test('answers; entity selection; failOnDetection', async () => {
    const r = await piiRedact.run(output('Reach me at bob@example.org or 415-555-0132'), { entities: ['email'] });
    expect(((r.transformed?.choices as JsonObject[])[0]?.message as JsonObject).content).toBe('Reach me at [EMAIL] or 415-555-0132');
    expect((await piiRedact.run(input('bob@example.org'), { failOnDetection: true })).verdict).toBe(false);
  });

  test('nothing found: passes without a body; random digits stay', async () => {
    const r = await piiRedact.run(input('order 4111111111111112 shipped, ref 1234567812345670'), {});
    expect(r).toMatchObject({ verdict: true, data: { total: 0 } });
    expect(r.transformed).toBeUndefined();
  });

  test('bad parameters', () => {
    expect(piiRedact.validate({ entities: ['passport'] })[0]).toStartWith('entities.0: must be one of email, phone, creditCard, usSsn, ukNino');
    expect(piiRedact.validate({ entities: [] })).toEqual(['entities: must not be empty']);
    expect(piiRedact.validate({ failOnDetection: 1 })).toEqual(['failOnDetection: must be true or false']);
  });
});
