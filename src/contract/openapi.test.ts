import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, test } from "vitest";
import { ENDPOINT_LIST } from "./endpoints.js";
import { LIST_LIMITS } from "./limits.js";
import { openApiDocument } from "./openapi.js";

// biome-ignore lint/suspicious/noExplicitAny: a JSON document walked by path in assertions; a wrong path fails the test
type Json = Record<string, any>;

/**
 * The emitted document loads in standard tools. A real validator (swagger-parser:
 * the OpenAPI 3.1 schema, then every $ref resolved) must accept it without a single error.
 */
describe("the OpenAPI 3.1 document", () => {
  const doc = openApiDocument() as Json;

  test("passes @apidevtools/swagger-parser validation, every $ref resolved", async () => {
    // validate() mutates what it is given: hand it a copy
    const api = (await SwaggerParser.validate(structuredClone(doc) as never)) as Json;
    expect(api.openapi).toBe("3.1.0");
    const dereferenced = JSON.stringify(await SwaggerParser.dereference(structuredClone(doc) as never));
    expect(dereferenced).not.toContain('"$ref"');
  });

  test("refers only into components/schemas, never to a $defs of an inlined schema", () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\/[A-Za-z]+$/);
      expect(doc.components.schemas[ref.split("/").at(-1)!], ref).toBeDefined();
    }
  });

  test("says what OpenAPI can: unique plugins, page bound, required headers, 401, 405, events, links", () => {
    const { schemas } = doc.components;
    expect(schemas.Agent.properties.plugins.uniqueItems).toBe(true);
    expect(schemas.CreateAgentBody.properties.plugins.uniqueItems).toBe(true);
    const list = doc.paths["/agents"].get;
    expect(list.parameters.find((p: Json) => p.name === "page").schema.maximum).toBe(2 ** 53 - 1);
    expect(LIST_LIMITS.maxInteger).toBe(2 ** 53 - 1);
    for (const ep of ENDPOINT_LIST) {
      const op = doc.paths[ep.path.replace(":agentId", "{agentId}")][ep.method.toLowerCase()];
      const ok = op.responses[ep.successStatus];
      for (const h of ["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"])
        expect(ok.headers[h]?.required, `${ep.id} ${h}`).toBe(true);
      expect(op.responses[401].headers["WWW-Authenticate"].required).toBe(true);
      expect(op.responses[405].headers.Allow.required).toBe(true);
    }
    const stream = doc.paths["/agents/{agentId}/messages"].post.responses[200].content["text/event-stream"];
    expect(Object.keys(stream["x-sse-events"]).sort()).toEqual(["delta", "done", "error"]);
    const links = doc.paths["/agents"].post.responses[201].links;
    expect(Object.keys(links).sort()).toEqual(["deleteAgent", "getAgent", "sendMessage", "updateAgent"]);
    for (const link of Object.values(links) as Json[]) expect(link.parameters.agentId).toBe("$response.body#/data/id");
  });
});
