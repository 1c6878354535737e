/** Email's settings: off without SMTP_URL, refusals that name the variable and never echo the password. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../../src/config.js";

const ok = { SMTP_URL: "smtps://mailer:p%40ss@smtp.example.com:465", EMAIL_FROM: "Tollgate <tollgate@example.com>", PUBLIC_URL: "https://tollgate.example.com/" };

/** The refusal's message, checked to be a ConfigError that does not echo the password. */
const refusal = (env: Record<string, string | undefined>): string => {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).not.toContain("p@ss");
    return (err as Error).message;
  }
  throw new Error("loadConfig accepted it");
};

describe("email settings", () => {
  it("are off without SMTP_URL", () => {
    expect(loadConfig({ PUBLIC_URL: ok.PUBLIC_URL }).email).toBeUndefined();
  });
  it("read a full set, the decoded password kept among the secrets to scrub", () => {
    const c = loadConfig(ok);
    expect(c.email).toEqual({ smtpUrl: ok.SMTP_URL, from: ok.EMAIL_FROM, publicUrl: "https://tollgate.example.com" });
    expect(c.secrets).toContain("p@ss");
    expect(loadConfig({ ...ok, SMTP_URL: "smtp://localhost:2525", EMAIL_FROM: "t@example.com" }).email).toEqual({
      smtpUrl: "smtp://localhost:2525",
      from: "t@example.com",
      publicUrl: "https://tollgate.example.com",
    });
  });
  it("refuse what cannot work, naming the variable to fix", () => {
    expect(refusal({ ...ok, SMTP_URL: "not a url" })).toMatch(/^SMTP_URL is not a URL/);
    expect(refusal({ ...ok, SMTP_URL: "https://mailer:p%40ss@smtp.example.com" })).toMatch(/^SMTP_URL must start with smtp:\/\/ or smtps:\/\//);
    expect(refusal({ ...ok, EMAIL_FROM: undefined })).toMatch(/^SMTP_URL needs EMAIL_FROM/);
    expect(refusal({ ...ok, EMAIL_FROM: "nobody" })).toMatch(/^EMAIL_FROM is not an address/);
    expect(refusal({ ...ok, EMAIL_FROM: "a@b.c\r\nBcc: x@y.z" })).toMatch(/^EMAIL_FROM is not an address/);
    expect(refusal({ ...ok, PUBLIC_URL: undefined })).toMatch(/^SMTP_URL needs PUBLIC_URL/);
    expect(refusal({ EMAIL_FROM: "t@example.com" })).toMatch(/^EMAIL_FROM is set but SMTP_URL is not/);
  });
});
