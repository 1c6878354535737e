import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real servers and child processes: give them room, never rely on timing for correctness.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    globalSetup: ["./test/support/build-web-setup.ts"],
    reporters: ["default", "./test/support/summary-line-reporter.ts"],
  },
});
