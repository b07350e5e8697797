/**
 * A local SMTP server on loopback (npm smtp-server, the real protocol) that keeps every message it receives, parsed
 * by mailparser, for tests of the gateway's e-mails. With `user`/`pass` it requires AUTH and refuses other logins.
 */
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** The envelope: MAIL FROM and RCPT TO. */
  envelopeFrom: string;
  envelopeTo: string[];
  /** The login used, when the server required one. */
  user: string | undefined;
  from: string;
  to: string[];
  subject: string;
  text: string;
}

export interface SmtpMock {
  host: string;
  port: number;
  messages: ReceivedMail[];
  /** Env settings for a gateway that sends here. */
  env: Record<string, string>;
  /** Resolves with the first message (received or to come) that matches; rejects after `timeoutMs`. */
  waitFor(match: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

function addresses(value: { value: { address?: string }[] } | { value: { address?: string }[] }[] | undefined): string[] {
  if (!value) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.flatMap((v) => v.value.map((a) => a.address ?? ''));
}

export async function startSmtpServer(options: { user?: string; pass?: string } = {}): Promise<SmtpMock> {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<{ match: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }>();
  const server = new SMTPServer({
    secure: false,
    // No STARTTLS offered: the client stays on plain text over loopback (no certificate to trust).
    disabledCommands: options.user ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.user,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.pass) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          const mail: ReceivedMail = {
            envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            envelopeTo: session.envelope.rcptTo.map((r) => r.address),
            user: typeof session.user === 'string' ? session.user : undefined,
            from: addresses(parsed.from)[0] ?? '',
            to: addresses(parsed.to),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
          };
          messages.push(mail);
          for (const waiter of waiters)
            if (waiter.match(mail)) {
              waiters.delete(waiter);
              waiter.resolve(mail);
            }
          callback();
        })
        .catch((error: unknown) => callback(error instanceof Error ? error : new Error(String(error))));
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  if (!address || typeof address === 'string') throw new Error('the SMTP server has no port');
  const port = address.port;
  return {
    host: '127.0.0.1',
    port,
    messages,
    env: {
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(port),
      SMTP_SECURE: 'false',
      SMTP_FROM: 'Gateway <gateway@example.test>',
      ...(options.user ? { SMTP_USER: options.user, SMTP_PASS: options.pass ?? '' } : {}),
    },
    waitFor(match, timeoutMs = 5_000) {
      const found = messages.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { match, resolve };
        waiters.add(waiter);
        setTimeout(() => {
          if (waiters.delete(waiter)) reject(new Error(`no matching e-mail within ${timeoutMs} ms; received: ${messages.map((m) => m.subject).join(' | ') || 'none'}`));
        }, timeoutMs).unref();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
