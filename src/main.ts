import { getRequestListener } from "@hono/node-server";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigError, loadConfig } from "./config.js";
import { jsonLogger } from "./logger.js";
import { capConnections } from "./server/connection-cap.js";
import { adapterErrorResponse } from "./server/request-errors.js";
import { createTollgate } from "./tollgate.js";

const SHUTDOWN_DEADLINE_MS = 5000;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const tollgate = await createTollgate({ config, log: jsonLogger({ level: config.logLevel }) });
  // Everything logs through the scrubbing logger createTollgate made.
  const { log } = tollgate;
  // Last resort: runs and settlers never reject, but a rejection nobody handles must not take down
  // every open stream with it. Logged (runs log their own failures with their run id first).
  process.on("unhandledRejection", (err) => log.error("unhandled rejection", { err }));
  const { requestTimeoutMs, maxConnections } = config.limits;
  const serverOptions = {
    // A request must arrive whole within this (headers and body); a stream already answering is
    // not a request still arriving, so it is exempt. Checked every second, not Node's default 30.
    requestTimeout: requestTimeoutMs,
    headersTimeout: requestTimeoutMs,
    connectionsCheckingInterval: 1000,
  };
  const listener = getRequestListener(tollgate.app.fetch, { hostname: config.host, errorHandler: adapterErrorResponse });
  const server = createServer(serverOptions, listener);
  capConnections(server, maxConnections, log);
  server.listen(config.port, config.host, () => {
    // Tests and scripts wait for exactly this line: plain text on a line of its own, among the
    // JSON log lines on the same stream.
    const url = `http://${config.host}:${(server.address() as AddressInfo).port}`;
    process.stdout.write(`tollgate listening on ${url}\n`);
    log.info("ready", { url, model: config.model, data_dir: config.dataDir });
  });

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: shutting down`);
    const deadline = setTimeout(() => {
      log.error("shutdown took too long; exiting");
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    const closed = new Promise<void>((resolve) => server.close(() => resolve())); // stop accepting
    await tollgate.runs.shutdown(); // streams in flight get their `cancelled` event and end
    // Let those last frames reach their sockets, then drop idle keep-alive connections.
    server.closeIdleConnections();
    await Promise.race([closed, new Promise((r) => setTimeout(r, 1000))]);
    server.closeAllConnections();
    await tollgate.close();
    clearTimeout(deadline);
    process.exit(0);
  };
  process.on("SIGTERM", (s) => void stop(s));
  process.on("SIGINT", (s) => void stop(s));
}

main().catch((err: unknown) => {
  process.stderr.write(`tollgate failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  // 2: the configuration is refused (fix it and start again); 1: anything else.
  process.exit(err instanceof ConfigError ? 2 : 1);
});
