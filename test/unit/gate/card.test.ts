/**
 * The gate's card: what every face shows of an interrupt, and whether a face with limits may offer
 * Approve. Table-driven: which cards a face shows whole, how a long card is split (nothing lost,
 * nothing over a limit), and that values stay text for each face to escape where it lands.
 */
import { describe, expect, it } from "vitest";
import { type CardSource, callParts, fitCard, interruptCard, layOutCard, NO_LIMITS, partsText, showsWhole, splitText } from "../../../src/gate/index.js";
import { pendingCall } from "../../helpers/pending-call.js";

const call = pendingCall;
const source = (over: Partial<CardSource> = {}): CardSource => ({
  thread_id: "t1",
  interrupt_id: "i1",
  calls: [call()],
  expires_at: "2026-12-05T13:00:00.000Z",
  requested_by: "alice",
  ...over,
});

/** Everything a face with these limits shows, run together. */
const shown = (blocks: ReturnType<typeof layOutCard>): string => blocks.flatMap((b) => b.parts.map((p) => p.text)).join("");

describe("what the card holds", () => {
  it("each call masked as it came, its version, policy in words, arguments and preview as JSON, the deadline", () => {
    const card = interruptCard(
      source({
        calls: [
          call({ preview: { refund: "4200 cents" } }),
          call({ call_id: "c2", name: "send_email", version: 3, policy: "quorum", requires: { role: "finance", approvers: 2 }, approvals: [{ by: "fin1", at: "x" }], preview_error: "no preview" }),
        ],
      }),
    );
    expect(card).toMatchObject({ open: true, headline: "Approval needed", tools: ["refund_order", "send_email"], status: "decide by 2026-12-05T13:00:00.000Z", versions: { c1: 1, c2: 3 } });
    expect(card.calls[0]).toEqual({ call_id: "c1", name: "refund_order", version: 1, policy: "Needs an approver", args: JSON.stringify(call().args, null, 2), preview: '{\n  "refund": "4200 cents"\n}' });
    expect(card.calls[1]).toMatchObject({ policy: "Needs 2 of finance — approved by fin1, waiting for 1 more of finance", preview_error: "no preview" });
    expect(callParts(card.calls[1]!).map((p) => p.text)).toEqual(["send_email · c2 · version 3", card.calls[1]!.policy, "Arguments:", card.calls[1]!.args, "Preview unavailable: no preview"]);
  });

  it.each([
    [{}, true, "Approval needed", "decide by 2026-12-05T13:00:00.000Z"],
    [{ type: "approval.escalated" as const }, true, "Still waiting for approval", "decide by 2026-12-05T13:00:00.000Z"],
    [{ type: "approval.decided" as const, partial: true }, true, "Partly approved", "decide by 2026-12-05T13:00:00.000Z"],
    [{ type: "approval.decided" as const, decided_by: "ops", at: "T", decisions: [{ call_id: "c1", decision: "approved" as const }] }, false, "Decided", "decided by ops at T (c1: approved)"],
    [{ type: "approval.expired" as const, at: "T" }, false, "Expired", "expired at T"],
    [{ type: "approval.cancelled" as const, decided_by: "alice", at: "T" }, false, "Cancelled", "cancelled by alice at T"],
  ])("a change %j leaves it open: %s, %s, %s", (change, open, headline, status) => {
    expect(interruptCard(source(change))).toMatchObject({ open, headline, status });
  });
});

describe("shown whole, or not approvable there", () => {
  const long = (n: number) => call({ args: { reason: "r".repeat(n), amount_cents: 49_999 } });
  const slack = { maxBlocks: 46, maxChars: 3_000 };
  it.each([
    ["one short call", true, [call()], slack],
    ["a call longer than one text", true, [long(2_700)], slack],
    ["a call over many texts that still fit", true, [long(100_000)], slack],
    ["a call past every block", false, [long(150_000)], slack],
    ["many calls, each short, past the blocks", false, Array.from({ length: 50 }, (_, i) => call({ call_id: `c${i}` })), slack],
    ["one block for everything", false, [call(), call({ call_id: "c2" })], { maxBlocks: 1, maxChars: 10_000 }],
    ["a face without limits", true, [long(1_000_000)], NO_LIMITS],
  ])("%s → whole: %s", (_what, whole, calls, limits) => {
    const card = interruptCard(source({ calls }));
    const fit = fitCard(card, limits);
    expect(fit.whole).toBe(whole);
    expect(showsWhole(card, limits)).toBe(whole);
    expect(fit.blocks.length).toBeLessThanOrEqual(limits.maxBlocks);
    for (const b of fit.blocks) expect(b.parts.reduce((n, p) => n + p.text.length, 0)).toBeLessThanOrEqual(limits.maxChars);
    if (whole) for (const c of card.calls) expect(shown(fit.blocks)).toContain(c.args);
  });

  it("a layout loses nothing: every call begins a block of its own, and its parts read back whole in order", () => {
    const card = interruptCard(source({ calls: [long(7_000), call({ call_id: "c2", preview: { p: "x".repeat(4_000) } })] }));
    const blocks = layOutCard(card, { maxChars: 3_000 });
    expect(blocks[0]).toEqual({ parts: [{ kind: "text", text: "Thread t1 · asked by alice · decide by 2026-12-05T13:00:00.000Z" }] });
    for (const c of card.calls) {
      const mine = blocks.filter((b) => b.call_id === c.call_id);
      expect(mine[0]!.parts[0]).toEqual({ kind: "title", text: `refund_order · ${c.call_id} · version 1` });
      expect(shown(mine)).toBe(callParts(c).map((p) => p.text).join(""));
    }
    // A long part starts in the room its block has left: 7,000 characters of c1 take three blocks, not four.
    expect(blocks.map((b) => b.call_id)).toEqual([undefined, "c1", "c1", "c1", "c2", "c2"]);
  });
});

describe("splitting a text", () => {
  it.each([
    ["short", "abc", 5, ["abc"]],
    ["exactly the limit", "abcde", 5, ["abcde"]],
    ["hard cut with no line end", "abcdefghij", 4, ["abcd", "efgh", "ij"]],
    ["after a line end in the piece's last half", "abc\ndefgh\nij", 6, ["abc\n", "defgh\n", "ij"]],
    ["not at a line end too early in the piece", "a\nbcdefghij", 6, ["a\nbcde", "fghij"]],
    ["never inside a surrogate pair", "abc😀def", 4, ["abc", "😀de", "f"]],
    ["the first piece in the room left", "abcdefghij", 4, ["ab", "cdef", "ghij"], 2],
    ["no room left for a surrogate pair", "😀abc", 4, ["😀ab", "c"], 1],
  ])("%s", (_what, text, max, pieces, first?: number) => {
    const out = splitText(text, max, first === undefined ? {} : { first });
    expect(out).toEqual(pieces);
    expect(out.join("")).toBe(text);
    for (const p of out) expect(p.length).toBeLessThanOrEqual(max);
  });
});

describe("values stay text: each face escapes them where they land", () => {
  const hostile = ["<https://evil.example|Click to approve> <!channel>", "```", "*amount is 5 dollars*", '<img src=x onerror="alert(1)">', "&amp;"];
  it.each(hostile)("%s reaches every part verbatim, never rewritten into markup", (value) => {
    const card = interruptCard(source({ thread_id: value, requested_by: value, calls: [call({ name: value, call_id: value, args: { note: value }, preview: value, preview_error: value })] }));
    const text = shown(layOutCard(card, { maxChars: 3_000 }));
    expect(text).toContain(`Thread ${value} · asked by ${value}`);
    expect(text).toContain(`${value} · ${value} · version 1`);
    expect(text).toContain(JSON.stringify(value));
    expect(text).toContain(`Preview unavailable: ${value}`);
    expect(partsText(callParts(card.calls[0]!))).toContain(`"note": ${JSON.stringify(value)}`);
  });
});
