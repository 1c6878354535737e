/**
 * The directory of principals the channels reach: AUTH_TOKENS' entries and AUTH_DIRECTORY's, with
 * their Slack user ids and addresses; an unknown role refuses to start, as in AUTH_TOKENS.
 */
import { describe, expect, it } from "vitest";
import { Access, Directory } from "../../../src/auth/index.js";
import { ConfigError, loadConfig } from "../../../src/config.js";

const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user"], slack_user: "UALICE", email: "alice@example.com" },
  "tok-fin1-0001": { sub: "fin1", roles: ["approver", "finance"], slack_user: "U0FIN1" },
};
const DIRECTORY = [{ sub: "fin2", roles: ["finance"], slack_user: "W0FIN2", email: "Fin2@Example.com" }];
const base = { AUTH_ROLES: "finance", AUTH_TOKENS: JSON.stringify(TOKENS), AUTH_DIRECTORY: JSON.stringify(DIRECTORY) };

describe("the directory", () => {
  it("maps Slack users and addresses to principals with the entry's roles; a request's principal carries only sub and roles", () => {
    const config = loadConfig(base);
    const d = new Directory(config.directory);
    expect(d.bySlackUser("U0FIN1")).toEqual({ sub: "fin1", roles: ["approver", "finance"] });
    expect(d.bySlackUser("W0FIN2")).toEqual({ sub: "fin2", roles: ["finance"] });
    expect(d.byEmail("fin2@example.com")?.sub).toBe("fin2");
    expect(d.bySlackUser("UNOBODY")).toBeUndefined();
    expect(config.auth.tokens?.get("tok-alice-0001")).toEqual({ sub: "alice", roles: ["user"] });
  });

  it("lists who may decide by the gate's own rule: a quorum of finance, never the owner", () => {
    const d = new Directory(loadConfig(base).directory);
    const who = d.mayDecide(new Access(true), { owner: "alice", calls: [{ policy: "quorum", requires: { role: "finance", approvers: 2 } }], requester: "alice" });
    expect(who.map((e) => e.sub)).toEqual(["fin1", "fin2"]);
  });

  it("an entry whose role is neither built in nor in AUTH_ROLES refuses to start, naming the principal", () => {
    expect(() => loadConfig({ ...base, AUTH_DIRECTORY: JSON.stringify([{ sub: "x", roles: ["legal"] }]) })).toThrow(
      new ConfigError("invalid configuration: AUTH_DIRECTORY gives 'x' the role 'legal', which is neither a built-in role nor in AUTH_ROLES"),
    );
    expect(() => loadConfig({ ...base, AUTH_DIRECTORY: JSON.stringify([{ sub: "x", roles: [], slack_user: "alice" }]) })).toThrow(ConfigError);
  });
});

describe("Slack's configuration", () => {
  const slack = { SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "s3cret", SLACK_CHANNEL: "C1" };
  it("is off unless configured; a token without a signing secret (or the reverse, or no channel) refuses to start", () => {
    expect(loadConfig({}).slack).toBeUndefined();
    expect(loadConfig(slack).slack).toEqual({ botToken: "xoxb-1", signingSecret: "s3cret", channel: "C1", apiUrl: "https://slack.com/api/" });
    expect(loadConfig({ ...slack, SLACK_API_URL: "http://127.0.0.1:9/api" }).slack?.apiUrl).toBe("http://127.0.0.1:9/api/");
    expect(() => loadConfig({ SLACK_BOT_TOKEN: "xoxb-1", SLACK_CHANNEL: "C1" })).toThrow(ConfigError);
    expect(() => loadConfig({ SLACK_SIGNING_SECRET: "s3cret" })).toThrow(ConfigError);
    expect(() => loadConfig({ SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "s3cret" })).toThrow(ConfigError);
    expect(loadConfig(slack).secrets).toEqual(expect.arrayContaining(["xoxb-1", "s3cret"]));
    expect(loadConfig({ CHANNEL_MAX_ATTEMPTS: "3" }).channelDelivery.maxAttempts).toBe(3);
  });
});
