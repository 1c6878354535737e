// Preloaded (--import) into every server started by server-process.ts. If the test process dies
// without killing its server (a vitest worker torn down by SIGTERM/SIGKILL, a crash, Ctrl-C),
// the IPC channel to it closes and the server goes too, instead of living on as an orphan that
// holds a port and a database. Plain .mjs so it loads before any TypeScript.
if (process.channel) {
  process.once("disconnect", () => process.kill(process.pid, "SIGKILL"));
  // The channel must not keep the server alive: graceful shutdown has to work as it would in prod.
  process.channel.unref();
}
