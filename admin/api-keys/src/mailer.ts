/**
 * E-mail over SMTP (nodemailer), configured by SMTP_HOST, SMTP_PORT, SMTP_USER, SMTP_PASS, SMTP_FROM and
 * SMTP_SECURE. Without SMTP_HOST nothing is sent: each message is logged at debug (subject and recipients only).
 */
import type { Transporter } from 'nodemailer';
import type { Logger } from '@gateway/sdk';

// Required when SMTP is configured rather than imported: nodemailer costs about 19 MB in every process.
const loadNodemailer = () => require('nodemailer') as typeof import('nodemailer');

export interface MailMessage {
  to: readonly string[];
  subject: string;
  text: string;
}

export interface Mailer {
  readonly enabled: boolean;
  /** Rejects when the SMTP server refuses or cannot be reached. */
  send(message: MailMessage): Promise<void>;
  close(): void;
}

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  user?: string;
  pass?: string;
  from: string;
}

const yes = (value: string | undefined) => ['1', 'true', 'on', 'yes'].includes((value ?? '').trim().toLowerCase());

/** The SMTP settings of the environment, or undefined without SMTP_HOST; throws on a bad SMTP_PORT. */
export function smtpSettings(env: Readonly<Record<string, string | undefined>>): SmtpSettings | undefined {
  const host = env.SMTP_HOST?.trim();
  if (!host) return undefined;
  const secure = yes(env.SMTP_SECURE);
  const port = env.SMTP_PORT ? Number(env.SMTP_PORT) : secure ? 465 : 587;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error(`SMTP_PORT must be a port number, not ${env.SMTP_PORT}`);
  return {
    host,
    port,
    secure,
    user: env.SMTP_USER || undefined,
    pass: env.SMTP_PASS || undefined,
    from: env.SMTP_FROM || 'AI Gateway <no-reply@localhost>',
  };
}

class SmtpMailer implements Mailer {
  readonly enabled = true;
  private readonly transport: Transporter;

  constructor(private readonly settings: SmtpSettings) {
    this.transport = loadNodemailer().createTransport({
      host: settings.host,
      port: settings.port,
      // true: TLS from the start (465); false: STARTTLS when the server offers it.
      secure: settings.secure,
      auth: settings.user ? { user: settings.user, pass: settings.pass ?? '' } : undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
  }

  async send(message: MailMessage): Promise<void> {
    await this.transport.sendMail({ from: this.settings.from, to: [...message.to], subject: message.subject, text: message.text });
  }

  close(): void {
    this.transport.close();
  }
}

class DisabledMailer implements Mailer {
  readonly enabled = false;
  constructor(private readonly logger: Logger | undefined) {}

  async send(message: MailMessage): Promise<void> {
    this.logger?.debug({ subject: message.subject, to: message.to }, 'e-mail not sent: SMTP_HOST is not set');
  }

  close(): void {}
}

export function createMailer(settings: SmtpSettings | undefined, logger?: Logger): Mailer {
  return settings ? new SmtpMailer(settings) : new DisabledMailer(logger);
}
