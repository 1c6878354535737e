import { getRequestListener } from "@hono/node-server";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Config } from "./config.js";
import { capConnections } from "./faces/api/connection-cap.js";
import { adapterErrorResponse } from "./faces/api/request-errors.js";
import type { Tollgate } from "./tollgate.js";

const SHUTDOWN_DEADLINE_MS = 5000;

export interface ServeOptions {
  /**
   * On SIGTERM/SIGINT, shut down in order and exit the process (0; 1 if that takes over 5 s), and
   * log unhandled rejections instead of dying of them. Default true; false leaves signals and the
   * process to you (call `stop()`).
   */
  handleSignals?: boolean;
}

export interface ServedTollgate {
  server: Server;
  /** e.g. `http://127.0.0.1:8787`, with the port actually bound (PORT=0 picks a free one). */
  url: string;
  /** Stops accepting, cancels runs in flight (their streams get `cancelled`), closes the store. */
  stop(): Promise<void>;
}

/**
 * Serves a Tollgate on `config.host:config.port` with the request-timeout and connection limits,
 * prints `tollgate listening on <url>` to stdout once bound (scripts and tests wait for exactly
 * that line) and, by default, shuts down cleanly on SIGTERM/SIGINT. The `tollgate` command and
 * your own server file share this.
 */
export async function serveTollgate(
  tollgate: Tollgate,
  config: Pick<Config, "host" | "port" | "limits">,
  opts: ServeOptions = {},
): Promise<ServedTollgate> {
  const { log } = tollgate;
  const handleSignals = opts.handleSignals ?? true;
  if (handleSignals) {
    // Last resort: runs and settlers never reject, but a rejection nobody handles must not take
    // down every open stream with it. Logged (runs log their own failures with their run id first).
    process.on("unhandledRejection", (err) => log.error("unhandled rejection", { err }));
  }
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
  capConnections(server, { max: maxConnections, log });
  server.on("upgrade", tollgate.upgrade);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const url = `http://${config.host}:${(server.address() as AddressInfo).port}`;
  process.stdout.write(`tollgate listening on ${url}\n`);
  const { model, store } = tollgate.serving;
  log.info("ready", { url, model, store: store.kind, ...(store.kind === "sqlite" ? { data_dir: store.dataDir } : { database: store.database }) });

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve())); // stop accepting
      await tollgate.runs.shutdown(); // streams in flight get their `cancelled` event and end
      // Let those last frames reach their sockets, then drop idle keep-alive connections.
      server.closeIdleConnections();
      await Promise.race([closed, new Promise((r) => setTimeout(r, 1000))]);
      server.closeAllConnections();
      await tollgate.close();
    })());

  if (handleSignals) {
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopped) return;
      log.info(`${signal}: shutting down`);
      setTimeout(() => {
        log.error("shutdown took too long; exiting");
        process.exit(1);
      }, SHUTDOWN_DEADLINE_MS).unref();
      void stop().then(() => process.exit(0));
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  }
  return { server, url, stop };
}
