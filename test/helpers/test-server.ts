/**
 * The server the e2e suites start (`startServer`'s default entry): the `tollgate` command, with
 * what a suite serves passed in code. Its two switches are the harness's, read here and never by
 * the server: `TOLLGATE_TEST_TOOLS=1` adds the test-only tools (slow, throwing, sensitive) to the
 * demo's, and `TOLLGATE_TEST_GRAPH` serves the demo agent as teams shape their graphs (`kit`:
 * built with the kit, pausing itself with `interrupt()`; `nested`: that graph inside a parent
 * graph's node), so every guarantee suite runs over both paths.
 */
import { agentVariant, builtInAgent } from "../../graphs/served-agent.js";
import { runCommand } from "../../src/command.js";
import { demoTablesOf } from "../../src/tollgate.js";
import { createDemoToolsOn } from "../../src/tools/index.js";
import { createTestToolsOn } from "../../src/tools/testing/test-tools.js";

const argv = process.argv.slice(2);
const graph = process.env.TOLLGATE_TEST_GRAPH ?? "builtin";
if (graph !== "builtin" && graph !== "kit" && graph !== "nested") throw new Error(`TOLLGATE_TEST_GRAPH must be builtin, kit or nested; got ${graph}`);
// A team's graphs bring their own tools: the test tools go with the demo agent only.
const servesGraphsFile = argv.length > 0 || !!process.env.TOLLGATE_GRAPHS;
const testTools = process.env.TOLLGATE_TEST_TOOLS === "1" && !servesGraphsFile;

runCommand({
  argv,
  env: process.env,
  serve: {
    agent: graph === "builtin" ? builtInAgent : agentVariant(graph),
    ...(testTools
      ? {
          tools: async (store) => {
            const tables = await demoTablesOf(store);
            return [...createDemoToolsOn(tables), ...createTestToolsOn(tables)];
          },
        }
      : {}),
  },
});
