/**
 * A real HTTP server standing in for the LangSmith API, so the real `langsmith` client runs
 * against it: it answers `/info` (no compression flags, so uploads arrive uncompressed; gzip is
 * undone anyway) and accepts runs in every form the client sends them — `POST /runs/multipart`
 * (form parts `post.<id>`, `patch.<id>`, `post.<id>.inputs`, …), `POST /runs/batch`,
 * `POST /runs`, `PATCH /runs/<id>` — recording each request's whole body and each run's fields.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The body as text, after undoing its content encoding. */
  body: string;
}

/** One run as the uploads built it: a post's fields, then each patch's over them. */
export type TracedRun = Record<string, any> & { id: string };

export interface LangSmithStandIn {
  url: string;
  requests: RecordedRequest[];
  /** By run id. */
  runs: Map<string, TracedRun>;
  /** Every body received, concatenated: for "this value appears nowhere". */
  allBodies(): string;
  /** Resolves when `check()` holds, polling until `timeoutMs`; rejects with `what` otherwise. */
  waitFor(check: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startLangSmithStandIn(): Promise<LangSmithStandIn> {
  const requests: RecordedRequest[] = [];
  const runs = new Map<string, TracedRun>();

  const merge = (id: string, fields: Record<string, unknown>) => {
    runs.set(id, { ...(runs.get(id) ?? {}), ...fields, id });
  };

  const ingest = async (method: string, path: string, contentType: string, body: Buffer): Promise<void> => {
    if (path === "/runs/multipart") {
      const form = await new Request("http://stand-in/", { method: "POST", headers: { "content-type": contentType }, body: new Uint8Array(body) }).formData();
      for (const [name, value] of form.entries()) {
        // `post.<id>` / `patch.<id>`: the run; `post.<id>.inputs` etc.: one field of it.
        const [, id, field] = name.split(".");
        if (!id) continue;
        const text = typeof value === "string" ? value : await value.text();
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          continue; // an attachment
        }
        merge(id, field ? { [field]: parsed } : (parsed as Record<string, unknown>));
      }
      return;
    }
    const json = body.length ? (JSON.parse(body.toString("utf8")) as Record<string, any>) : {};
    if (path === "/runs/batch") {
      for (const run of [...(json.post ?? []), ...(json.patch ?? [])]) merge(run.id, run);
    } else if (method === "POST" && path === "/runs") {
      merge(json.id, json);
    } else if (method === "PATCH" && path.startsWith("/runs/")) {
      merge(path.slice("/runs/".length), json);
    }
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const path = (req.url ?? "/").split("?")[0]!;
        let body = Buffer.concat(chunks);
        const encoding = req.headers["content-encoding"];
        if (encoding === "gzip") body = gunzipSync(body);
        else if (encoding) throw new Error(`the stand-in cannot decode ${encoding}`);
        requests.push({ method: req.method ?? "", path, headers: req.headers, body: body.toString("utf8") });
        if (req.method === "GET" && path === "/info") {
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ version: "0.12.0", batch_ingest_config: { use_multipart_endpoint: true } }));
          return;
        }
        await ingest(req.method ?? "", path, String(req.headers["content-type"] ?? ""), body);
        res.writeHead(202, { "content-type": "application/json" }).end("{}");
      })().catch((err: unknown) => {
        res.writeHead(500, { "content-type": "text/plain" }).end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    runs,
    allBodies: () => requests.map((r) => r.body).join("\n"),
    async waitFor(check, what, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`LangSmith stand-in: timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
