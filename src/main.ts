#!/usr/bin/env node
// The `tollgate` command (and `npm start`): the built-in agent with the demo tools and the model
// the environment names, or the graphs of `--graphs`. Your own server file does the same with
// your tools or graphs: see src/index.ts.
import { builtInAgent } from "../graphs/served-agent.js";
import { runCommand } from "./command.js";

runCommand({ argv: process.argv.slice(2), env: process.env, serve: { agent: builtInAgent } });
