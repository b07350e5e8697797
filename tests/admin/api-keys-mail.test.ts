// The SMTP settings and the mailer of the api-keys plugin, against a local SMTP server speaking the real protocol.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createMailer, smtpSettings } from '@gateway/admin-api-keys';
import { testLogger } from '@gateway/sdk/testing';
import { startSmtpServer, type SmtpMock } from '../mocks/smtp-server.ts';

describe('SMTP settings', () => {
  test('none without SMTP_HOST; ports by SMTP_SECURE; a bad port is refused', () => {
    expect(smtpSettings({})).toBeUndefined();
    expect(smtpSettings({ SMTP_HOST: '  ' })).toBeUndefined();
    expect(smtpSettings({ SMTP_HOST: 'mail.example.test' })).toEqual({
      host: 'mail.example.test',
      port: 587,
      secure: false,
      user: undefined,
      pass: undefined,
      from: 'AI Gateway <no-reply@localhost>',
    });
    expect(smtpSettings({ SMTP_HOST: 'mail.example.test', SMTP_SECURE: 'true' })).toMatchObject({ port: 465, secure: true });
    expect(smtpSettings({ SMTP_HOST: 'm', SMTP_SECURE: 'ON', SMTP_PORT: '2465', SMTP_USER: 'u', SMTP_PASS: 'p', SMTP_FROM: 'a@b.test' })).toEqual({
      host: 'm',
      port: 2465,
      secure: true,
      user: 'u',
      pass: 'p',
      from: 'a@b.test',
    });
    expect(() => smtpSettings({ SMTP_HOST: 'm', SMTP_PORT: 'smtp' })).toThrow('SMTP_PORT');
    expect(() => smtpSettings({ SMTP_HOST: 'm', SMTP_PORT: '70000' })).toThrow('SMTP_PORT');
  });

  test('without SMTP_HOST a message is skipped and logged at debug, without its text', async () => {
    const logger = testLogger();
    const mailer = createMailer(undefined, logger);
    expect(mailer.enabled).toBe(false);
    await mailer.send({ to: ['a@example.test'], subject: 'Hello', text: 'body text' });
    expect(logger.records).toEqual([{ level: 'debug', obj: { subject: 'Hello', to: ['a@example.test'] }, msg: 'e-mail not sent: SMTP_HOST is not set' }]);
  });
});

describe('SMTP mailer', () => {
  let smtp: SmtpMock;
  beforeAll(async () => {
    smtp = await startSmtpServer({ user: 'gw', pass: 'pw' });
  });
  afterAll(() => smtp?.close());

  test('sends over SMTP with AUTH, from SMTP_FROM, to every recipient', async () => {
    const settings = smtpSettings(smtp.env);
    const mailer = createMailer(settings);
    try {
      await mailer.send({ to: ['one@example.test', 'two@example.test'], subject: 'Clé « rotation » ✓', text: 'Line one\nLine two é\n' });
      const mail = await smtp.waitFor((m) => m.subject.startsWith('Clé'));
      expect(mail).toMatchObject({
        user: 'gw',
        envelopeFrom: 'gateway@example.test',
        envelopeTo: ['one@example.test', 'two@example.test'],
        from: 'gateway@example.test',
        to: ['one@example.test', 'two@example.test'],
        subject: 'Clé « rotation » ✓',
      });
      expect(mail.text.trim()).toBe('Line one\nLine two é');
    } finally {
      mailer.close();
    }
  });

  test('a refused login rejects the send', async () => {
    const mailer = createMailer(smtpSettings({ ...smtp.env, SMTP_PASS: 'wrong' }));
    try {
      await expect(mailer.send({ to: ['x@example.test'], subject: 's', text: 't' })).rejects.toThrow();
    } finally {
      mailer.close();
    }
  });
});
