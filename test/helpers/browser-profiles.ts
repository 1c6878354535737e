/**
 * Browser profiles for a page suite: each `newPage()` is a fresh context (another person), and
 * after every test they are closed and the test fails on any uncaught error or CSP refusal a
 * page reported. Call at the top of a suite, with the suite's browser.
 */
import type { Browser, Page } from "playwright-core";
import { afterEach, expect } from "vitest";
import { pageInNewContext } from "./browser.js";

export function browserProfiles(browser: () => Browser): { newPage(opts?: { viewport?: { width: number; height: number } }): Promise<Page> } {
  let contexts: Array<{ close(): Promise<void> }> = [];
  let pageErrors: string[] = [];
  afterEach(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    contexts = [];
    const errors = pageErrors;
    pageErrors = [];
    expect(errors, "uncaught errors in the page").toEqual([]);
  });
  return {
    async newPage(opts = {}) {
      const { context, page } = await pageInNewContext(browser(), { ...opts, onError: (e) => pageErrors.push(e) });
      contexts.push(context);
      return page;
    },
  };
}
