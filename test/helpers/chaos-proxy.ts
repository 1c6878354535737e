import net from "node:net";
import { mulberry32 } from "./random.js";

export interface ChaosProxy {
  url: string;
  /** Connections cut so far. */
  cuts(): number;
  close(): Promise<void>;
}


/**
 * A TCP proxy on 127.0.0.1 that forwards to `target` and cuts each connection after a random
 * number of response bytes (between `minBytes` and `maxBytes`), mid-frame or not: what a flaky
 * mobile network or an impatient proxy does to a long-lived stream.
 */
export async function startChaosProxy(target: string, opts: { seed: number; minBytes: number; maxBytes: number }): Promise<ChaosProxy> {
  const { hostname, port } = new URL(target);
  const rand = mulberry32(opts.seed);
  const sockets = new Set<net.Socket>();
  let cuts = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let budget = Math.floor(opts.minBytes + rand() * (opts.maxBytes - opts.minBytes));
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (d) => upstream.write(d));
    upstream.on("data", (d: Buffer) => {
      if (d.length < budget) {
        budget -= d.length;
        client.write(d);
        return;
      }
      client.write(d.subarray(0, budget), () => {
        cuts++;
        drop();
      });
    });
    for (const s of [client, upstream]) {
      s.on("error", drop);
      s.on("close", () => {
        sockets.delete(s);
        drop();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    cuts: () => cuts,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
