import { describe, expect, test } from "vitest";
import { API_PREFIX, ENDPOINT_LIST, endpointPath, endpointsAtPath, matchEndpoint } from "./index.js";

describe("the endpoint table", () => {
  test.for(ENDPOINT_LIST.map((spec) => [spec.id, spec] as const))("%s: its example request passes its schemas", ([, spec]) => {
    expect(spec.body === undefined, "an example body exactly when the endpoint takes one").toBe(spec.example.body === undefined);
    if (spec.body) expect(spec.body.safeParse(spec.example.body).error?.issues ?? []).toEqual([]);
    if (spec.query) expect(spec.query.safeParse(spec.example.query ?? {}).error?.issues ?? []).toEqual([]);
  });

  test.for(ENDPOINT_LIST.map((spec) => [spec.id, spec] as const))("%s: matchEndpoint finds it at its own path", ([, spec]) => {
    const path = endpointPath(spec, "agt_1");
    expect(matchEndpoint(spec.method, path)?.spec.id).toBe(spec.id);
    expect(matchEndpoint(spec.method, `${path}?page=2`)?.spec.id, "a query does not matter").toBe(spec.id);
    expect(matchEndpoint(spec.method, `${path}/`), "PROFILE §9: a trailing slash is another path").toBeUndefined();
    expect(matchEndpoint(spec.method, `${path}/`, { lenient: true })?.spec.id, "unless lenient").toBe(spec.id);
    expect(endpointsAtPath(path.replace("agt_1", "x"))).toContain(spec);
  });

  test("matchEndpoint: agent ids, absolute URLs and other bases", () => {
    expect(matchEndpoint("GET", "/agents/a%20b")?.agentId).toBe("a b");
    const base = `http://127.0.0.1:1${API_PREFIX}`;
    expect(matchEndpoint("DELETE", `${base}/agents/agt_1`, { baseUrl: base })?.spec.id).toBe("deleteAgent");
    expect(matchEndpoint("GET", "http://127.0.0.1:1/other/agents", { baseUrl: base })).toBeUndefined();
    expect(matchEndpoint("PUT", "/agents/agt_1")).toBeUndefined();
  });
});
