import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT, startServer, type ServerProcess } from "../../helpers/server-process.js";

const FIXTURE = "test/unit/helpers/fixtures/fake-main.ts";
const started: ServerProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.kill("SIGKILL")));
});

async function start(env: Record<string, string | undefined> = {}, dataDir?: string) {
  const s = await startServer(env, { entry: FIXTURE, dataDir, killGraceMs: 500 });
  started.push(s);
  return s;
}

describe("startServer (against a fixture entry)", () => {
  it("waits for the listening line and passes config through env", async () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = "leaked-from-shell";
    const s = await start({ MODEL: "fake", MAX_ROUNDS: "3", HOME: undefined }).finally(() => {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    });
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { env, cwd, pid } = (await (await fetch(`${s.url}/env`)).json()) as any;
    expect(pid).toBe(s.child.pid); // no wrapper process in between
    expect(cwd).toBe(REPO_ROOT);
    expect(env).toMatchObject({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: s.dataDir, MODEL: "fake", MAX_ROUNDS: "3" });
    expect(env.OPENAI_API_KEY).toBeUndefined();
    expect(env.HOME).toBeUndefined();
    expect(fs.statSync(s.dataDir).isDirectory()).toBe(true);
    expect(path.basename(s.dataDir)).toMatch(/^tollgate-/);
    expect(s.stdout()).toContain("booting…");
  });

  it("kill() sends SIGTERM and resolves with the exit code", async () => {
    const s = await start();
    expect(await s.kill()).toBe(0);
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(await s.kill()).toBe(0); // idempotent after exit
  });

  it("SIGKILL really kills the server, and a restart can reuse the data dir", async () => {
    const s = await start();
    expect(await s.kill("SIGKILL")).toBeNull();
    expect((await s.exited).signal).toBe("SIGKILL");
    await expect(fetch(`${s.url}/env`)).rejects.toThrow();
    const again = await start({}, s.dataDir);
    expect(again.dataDir).toBe(s.dataDir);
  });

  it("rejects with stderr when the process exits before ready", async () => {
    await expect(startServer({ FIXTURE_MODE: "crash" }, { entry: FIXTURE })).rejects.toThrow(/exited before ready \(code 3[\s\S]*boom: config invalid/);
  });

  it("escalates to SIGKILL when SIGTERM is ignored", async () => {
    const s = await start({ FIXTURE_MODE: "stubborn" });
    const killed = s.kill();
    await expect(killed).resolves.toBeNull();
    expect((await s.exited).signal).toBe("SIGKILL");
  });

  describe("when the test process dies without kill()", () => {
    async function parentWithServer() {
      const parent = spawn(process.execPath, ["--import", "tsx", "test/unit/helpers/fixtures/orphan-parent.ts"], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] });
      const [line] = (await once(parent.stdout!, "data")) as [Buffer];
      return { parent, ...(JSON.parse(line.toString()) as { pid: number; dataDir: string }) };
    }
    const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
    async function gone(pid: number) {
      for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
      return !alive(pid);
    }

    it("SIGKILL of the test process takes the server with it", async () => {
      const { parent, pid, dataDir } = await parentWithServer();
      expect(alive(pid)).toBe(true);
      parent.kill("SIGKILL");
      expect(await gone(pid)).toBe(true);
      fs.rmSync(dataDir, { recursive: true, force: true }); // a SIGKILLed parent cannot clean up
    });

    it("SIGTERM of the test process kills the server and removes its temp dir", async () => {
      const { parent, pid, dataDir } = await parentWithServer();
      expect(fs.existsSync(dataDir)).toBe(true);
      parent.kill("SIGTERM");
      const [, signal] = await once(parent, "exit");
      expect(signal).toBe("SIGTERM"); // re-raised: the parent still dies of the signal
      expect(await gone(pid)).toBe(true);
      expect(fs.existsSync(dataDir)).toBe(false);
    });
  });
});
