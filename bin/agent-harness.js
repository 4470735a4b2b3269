#!/usr/bin/env node
// The installed package runs the JavaScript compiled into dist/ (scripts/build-package.mjs). A
// checkout, which has the TypeScript sources, compiles them at the first start after an edit
// (scripts/checkout-tree.mjs, into .build/cli/), so it needs no build step and never runs a stale
// tree; where it cannot (no esbuild, a checkout it may not write) it runs them through tsx. A
// source that does not compile stops it, in one line naming the file and line.
import { existsSync } from "node:fs";

const source = new URL("../src/cli/main.ts", import.meta.url);
// A checkout's test suites start the CLI hundreds of times (a verify run per injected fault): they
// compile it once with its suites (scripts/build-package.mjs --outdir DIR, in their globalSetup)
// and name the tree here, so that every child run loads that one tree.
const compiled = process.env.AGENT_HARNESS_COMPILED;
try {
  let main;
  if (compiled) {
    ({ main } = await import(new URL(`../${compiled}/src/cli/main.js`, import.meta.url).href));
  } else if (existsSync(source)) {
    const { compiledCheckout } = await import("../scripts/checkout-tree.mjs");
    const tree = await compiledCheckout();
    if (tree) ({ main } = await import(new URL(`../${tree}/src/cli/main.js`, import.meta.url).href));
    else {
      // tsx's loader hooks see every module imported after register(), node_modules too: through them
      // vitest's own modules took 3-4 times the CPU to load (docs/figures.md). verify's heavy
      // dependencies are imported first, by node alone; its TypeScript then finds them loaded.
      const [command, ...options] = process.argv.slice(2);
      if (command === "verify" && !options.includes("--help"))
        await Promise.all(["vitest/node", "fastify", "undici", "zod"].map((m) => import(m)));
      const { register } = await import("tsx/esm/api");
      register();
      ({ main } = await import(source.href));
    }
  } else {
    ({ main } = await import("../dist/src/cli/main.js"));
  }
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  // the harness could not even load: a harness error (exit 2, one line), never the 1 a CI reads as
  // a defect of the service (main() guards everything after this point itself)
  process.stderr.write(
    `agent-harness: internal error (a harness error, not a finding about the service): cannot load the CLI: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}\n`,
  );
  process.exitCode = 2;
}
