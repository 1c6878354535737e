/** Who gets a mail: the gate's own rule (Access), each principal with an email once; owner and requester only where the rule lets them. */
import { describe, expect, it } from "vitest";
import { Access, type DirectoryEntry } from "../../../../src/auth/index.js";
import { emailRecipients } from "../../../../src/faces/email/index.js";
import { notice, refundCall } from "./notice-fixture.js";

const entries: DirectoryEntry[] = [
  { sub: "alice", roles: ["user", "approver"], email: "alice@example.com" },
  { sub: "bob", roles: ["user"], email: "bob@example.com" },
  { sub: "fin1", roles: ["approver", "finance"], email: "fin1@example.com" },
  { sub: "fin1", roles: ["approver", "finance"], email: "fin1-other@example.com" },
  { sub: "fin2", roles: ["finance"], email: "fin2@example.com" },
  { sub: "fin3", roles: ["finance"], slack_user: "U0FIN3" },
  { sub: "boss", roles: ["admin"], email: "boss@example.com" },
];
const access = new Access(true);
const now = Date.now();
const subs = (r: { sub: string }[]) => r.map((x) => x.sub);

describe("emailRecipients", () => {
  it("an approver call: approvers and admins, never its owner or requester (four eyes)", () => {
    const r = emailRecipients(access, entries, { notice: notice(now), owner: "alice", requester: "alice", partial: false });
    expect(subs(r)).toEqual(["fin1", "boss"]);
    expect(r[0]).toEqual({ sub: "fin1", email: "fin1@example.com" });
  });

  it("an owner call: the owner gets one too, a plain user does not", () => {
    const r = emailRecipients(access, entries, { notice: notice(now, { calls: [refundCall({ policy: "owner" })] }), owner: "bob", requester: "bob", partial: false });
    expect(subs(r)).toEqual(["alice", "bob", "fin1", "boss"]);
  });

  it("a quorum call: the role's holders with an email, not the requester", () => {
    const q = refundCall({ policy: "quorum", requires: { role: "finance", approvers: 2 } });
    const r = emailRecipients(access, entries, { notice: notice(now, { calls: [q] }), owner: "alice", requester: "fin2", partial: true });
    expect(subs(r)).toEqual(["fin1", "boss"]);
  });
});
