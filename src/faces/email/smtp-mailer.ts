import nodemailer from "nodemailer";
import type { ApprovalEmail } from "./email-message.js";

/** Sends one mail; the outbox retries a rejection. */
export interface Mailer {
  send(to: string, mail: ApprovalEmail): Promise<{ messageId: string }>;
  /** Closes pooled connections (at shutdown). */
  close(): void;
}

/** How long an SMTP server may take to connect, greet and answer before the attempt fails (the outbox retries). */
export interface SmtpTimeouts {
  connectionMs: number;
  greetingMs: number;
  socketMs: number;
}

const DEFAULT_TIMEOUTS: SmtpTimeouts = { connectionMs: 10_000, greetingMs: 10_000, socketMs: 30_000 };

/**
 * A Mailer over nodemailer's SMTP transport from `SMTP_URL` (`smtp://` upgrades with STARTTLS
 * when the server offers it, `smtps://` is TLS from the start). `tls` is for tests with a
 * self-signed server only.
 */
export function smtpMailer(o: { smtpUrl: string; from: string; timeouts?: Partial<SmtpTimeouts>; tls?: { rejectUnauthorized: boolean } }): Mailer {
  const t = { ...DEFAULT_TIMEOUTS, ...o.timeouts };
  const url = new URL(o.smtpUrl);
  const transport = nodemailer.createTransport({
    host: url.hostname,
    port: url.port ? Number(url.port) : url.protocol === "smtps:" ? 465 : 587,
    secure: url.protocol === "smtps:",
    ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
    connectionTimeout: t.connectionMs,
    greetingTimeout: t.greetingMs,
    socketTimeout: t.socketMs,
    ...(o.tls ? { tls: o.tls } : {}),
    // Nodemailer's own logger stays off: it would write the message, and with it the link.
    logger: false,
    debug: false,
  });
  return {
    async send(to, mail) {
      const info = await transport.sendMail({ from: o.from, to, subject: mail.subject, text: mail.text, html: mail.html });
      return { messageId: info.messageId };
    },
    close: () => transport.close(),
  };
}
