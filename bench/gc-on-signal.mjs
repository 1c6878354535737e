// Preloaded (NODE_OPTIONS=--import) into the servers the memory suite starts: SIGUSR2 runs a
// full garbage collection, so RSS is read without whatever garbage happened to be pending.
// Plain .mjs so it loads before any TypeScript. Nothing else in the server changes.
import v8 from "node:v8";
import vm from "node:vm";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc");
process.on("SIGUSR2", () => gc());
