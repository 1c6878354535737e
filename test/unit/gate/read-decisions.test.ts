/**
 * The permit's one parser for decisions, table-driven: every shape a run's config or LangGraph's
 * resume may carry, and fail closed on everything else.
 */
import { describe, expect, it } from "vitest";
import { readDecisions } from "../../../src/gate/index.js";

const approved = { call_id: "c1", approved: true, reason: undefined, args_hash: undefined };
const rejected = { call_id: "c2", approved: false, reason: "no", args_hash: undefined };

describe("readDecisions", () => {
  const read: Array<[string, unknown, unknown[]]> = [
    ["an array", [{ call_id: "c1", approved: true }, { call_id: "c2", approved: false, reason: "no" }], [approved, rejected]],
    ["an object keyed by call id", { c1: { approved: true }, c2: { approved: false, reason: "no" } }, [approved, rejected]],
    ["either as a JSON string", JSON.stringify([{ call_id: "c1", approved: true }]), [approved]],
    ["wrapped as {decisions}", { decisions: [{ call_id: "c1", approved: true }] }, [approved]],
    ["wrapped, as a JSON string inside", { decisions: JSON.stringify({ c1: { approved: true } }) }, [approved]],
    ["with the hash shown and an edit", [{ call_id: "c1", approved: true, args_hash: "h", edited_args: { cents: 1 } }], [{ ...approved, args_hash: "h", edited_args: { cents: 1 } }]],
    ["an edit kept as given, for the gate to refuse", [{ call_id: "c1", approved: true, edited_args: "cents=1" }], [{ ...approved, edited_args: "cents=1" }]],
    ["an empty reason is none", [{ call_id: "c2", approved: false, reason: "" }], [{ ...rejected, reason: undefined }]],
    ["only a literal true approves", [{ call_id: "c1", approved: "true" }, { call_id: "c2", approved: 1 }], [{ ...approved, approved: false }, { ...rejected, approved: false, reason: undefined }]],
    ["the key names the call: a call_id inside cannot redirect it", { c1: { call_id: "c9", approved: true } }, [approved]],
    ["entries that are not objects or name no call are skipped", [null, 3, { approved: true }, { call_id: 7 }, { call_id: "c1", approved: true }], [approved]],
  ];
  for (const [name, value, want] of read) {
    it(name, () => expect([...readDecisions(value).values()]).toEqual(want));
  }

  const none: Array<[string, unknown]> = [
    ["undefined", undefined],
    ["not JSON", "{approve"],
    ["a number", 42],
    ["null", null],
    ["decisions that are not a list or a map", { decisions: 5 }],
  ];
  for (const [name, value] of none) {
    it(`reads no decision from ${name}: fail closed`, () => expect(readDecisions(value).size).toBe(0));
  }
});
