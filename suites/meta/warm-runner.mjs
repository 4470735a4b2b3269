// A CLI kept warm for the test suites' hundreds of harness runs (suites/meta/verify-run.ts).
//
// Each run as a process of its own paid about 2 s of CPU before its first check: node's start,
// the harness's modules and vitest's own (importing `vitest/node` alone is 1.8 s). This process
// loads them once, then runs the CLI's `main` for each request its parent sends over the IPC
// channel, one at a time, and answers with the exit code and what the run wrote to stdout and
// stderr. A run's checks still run in vitest workers of their own, started afresh by each run.
//
// What a run leaves in the process is undone after it: the listeners it added (the CLI's exit
// guard, vitest's), the exit code it set. A run that ends the process (its exit guard on a crash)
// answers first. The parent sends only runs whose environment is the one this process started
// with; a run that needs another (a proxy's variables) is a process of its own. The process ends
// when its parent goes.

const compiled = process.env.AGENT_HARNESS_COMPILED;
if (!compiled) throw new Error("warm-runner.mjs needs AGENT_HARNESS_COMPILED (the compiled tree to run)");
const { main } = await import(new URL(`../../${compiled}/src/cli/main.js`, import.meta.url).href);

const EVENTS = ["uncaughtException", "unhandledRejection", "SIGINT", "SIGTERM", "exit", "beforeExit", "warning"];

const exit = process.exit.bind(process);

/** Runs `argv` through the CLI, its output captured: one run at a time (the parent waits for each answer). */
async function run(id, argv) {
  const before = new Map(EVENTS.map((e) => [e, new Set(process.listeners(e))]));
  const chunks = [];
  const writes = { out: process.stdout.write, err: process.stderr.write };
  const capture = (chunk, encoding, callback) => {
    chunks.push(
      typeof chunk === "string" ? chunk : Buffer.from(chunk).toString(typeof encoding === "string" ? encoding : "utf8"),
    );
    const done = typeof encoding === "function" ? encoding : callback;
    if (done) queueMicrotask(done);
    return true;
  };
  process.stdout.write = capture;
  process.stderr.write = capture;
  // a run that ends the process (its exit guard on a crash) answers first, with what it wrote and
  // the code a process of its own would end with: its 'exit' listeners have their say on it
  process.exit = (code) => {
    if (code !== undefined) process.exitCode = code;
    process.emit("exit", process.exitCode ?? 0);
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    const final = Number(process.exitCode ?? 0);
    process.send({ id, code: final, output: chunks.join("") }, () => exit(final));
  };
  let code;
  try {
    code = await main(argv);
    // a rejection the run left unhandled is seen once this turn's microtasks are done: while the
    // run's exit guard still listens, as in a process of its own that ends after main returns
    await new Promise((resolve) => setImmediate(resolve));
  } catch (err) {
    chunks.push(`warm runner: main threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    code = 2;
  } finally {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    for (const event of EVENTS)
      for (const listener of process.listeners(event)) if (!before.get(event).has(listener)) process.off(event, listener);
    process.exitCode = undefined;
    process.exit = exit;
  }
  return { code, output: chunks.join("") };
}

process.on("message", (request) => {
  void run(request.id, request.argv).then((answer) => process.send({ id: request.id, ...answer }));
});
process.on("disconnect", () => process.exit(0));
process.send({ ready: true });
