import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/server-process.js";

// A README block marked `<!-- quote: <path> -->` shows that file of the repository verbatim: the
// file is run by a test, so the block a reader copies is one that passes.

const QUOTE = /<!-- quote: (\S+) -->\n```\w*\n([\s\S]*?)```\n/g;

function quotes(readme: string): Array<{ file: string; block: string }> {
  return [...readme.matchAll(QUOTE)].map((m) => ({ file: m[1]!, block: m[2]! }));
}

describe("README quotes", () => {
  const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");

  it("quotes the payout desk's test, the recipe for testing your own tools without a key", () => {
    expect(quotes(readme).map((q) => q.file)).toContain("examples/payout-desk/test/payout.test.js");
  });

  it("every quoted block equals its file", () => {
    for (const { file, block } of quotes(readme)) {
      expect(block, `README's quote of ${file}`).toBe(fs.readFileSync(path.join(REPO_ROOT, file), "utf8"));
    }
  });
});
