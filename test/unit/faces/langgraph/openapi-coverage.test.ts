import { describe, expect, it } from "vitest";
import { LANGGRAPH_OPENAPI, langGraphApi, langGraphMeta } from "../../../../src/faces/langgraph/index.js";
import type { AppDeps } from "../../../../src/faces/api/index.js";

/** `/a/:b/c` → `/a/{b}/c`, as OpenAPI spells a path. */
const openApiPath = (p: string) => p.replace(/:([a-z_]+)/g, "{$1}");

describe("LangGraph's API in the OpenAPI document", () => {
  it("documents every route /langgraph serves, and no route it does not", () => {
    // Routes are registered when the app is built; no dependency is touched until a request.
    const apps = [langGraphApi({} as AppDeps), langGraphMeta("0.0.0")];
    const served = apps.flatMap((a) => a.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method.toLowerCase()} /langgraph${openApiPath(r.path)}`));
    const documented = LANGGRAPH_OPENAPI.endpoints.map((e) => `${e.method} ${e.path}`);
    expect(new Set(documented)).toEqual(new Set(served));
  });
});
