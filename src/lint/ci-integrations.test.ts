/**
 * The CI integrations (docs/ci.md): action.yml and the workflows docs/ci.md shows are valid for
 * GitHub (the SchemaStore schemas, through @action-validator/core), the GitLab template reports
 * JUnit, no key is ever an input, and the action's verify step runs as the runner would run it:
 * its inputs substituted, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY as files, against the embedded
 * server, once clean and once with an injected fault.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { validateAction, validateWorkflow } from "@action-validator/core";
import { afterAll, describe, expect, test } from "vitest";
import { parse } from "yaml";
import { z } from "zod";
import { VERIFY_OPTIONS } from "../run/config.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const ACTION_TEXT = read("action.yml");
const GITLAB_TEXT = read("ci/gitlab/agent-harness.gitlab-ci.yml");
const DOC = read("docs/ci.md");
const SCRATCH = mkdtempSync(join(tmpdir(), "agent-harness-action-"));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

/** What the test reads of action.yml (the schema validator checks the rest). */
const Step = z.object({
  id: z.string().optional(),
  if: z.string().optional(),
  uses: z.string().optional(),
  run: z.string().optional(),
  "working-directory": z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  with: z.record(z.string(), z.string()).optional(),
});
type Step = z.infer<typeof Step>;
const Action = z.object({
  inputs: z.record(z.string(), z.object({ default: z.string().optional() })),
  outputs: z.record(z.string(), z.object({ value: z.string() })),
  runs: z.object({ using: z.literal("composite"), steps: z.array(Step) }),
});
const action = Action.parse(parse(ACTION_TEXT));
const GitLab = z.object({
  ".agent-harness": z.object({
    variables: z.record(z.string(), z.string()),
    script: z.array(z.string()),
    artifacts: z.object({ when: z.string(), paths: z.array(z.string()), reports: z.object({ junit: z.string() }) }),
  }),
});

const HARNESS_VARIABLES = new Set<string>(Object.values(VERIFY_OPTIONS).map((o) => o.env));
/** The variables that carry keys: never an input, never a value written in a CI file. */
const KEY_VARIABLES = new Set<string>(
  Object.values(VERIFY_OPTIONS)
    .filter((o) => /-keys?$/.test(o.flag))
    .map((o) => o.env),
);
const WORKFLOWS = [...DOC.matchAll(/^```yaml\n([\s\S]*?)^```/gm)].map((m) => m[1] ?? "").filter((y) => /^jobs:/m.test(y));

describe("the CI files", () => {
  test("action.yml is a valid action, and the validator refuses a broken one", () => {
    expect(validateAction(ACTION_TEXT).errors).toEqual([]);
    // a composite step without a shell is refused: the validator is not a yes-man
    const broken = ACTION_TEXT.replace(/^ {6}shell: bash\n/m, "");
    expect(broken).not.toBe(ACTION_TEXT);
    expect(validateAction(broken).errors).not.toEqual([]);
  });

  test("docs/ci.md shows three workflows (pull request, deploy, nightly), each valid", () => {
    expect(WORKFLOWS.map((w) => /^on: (\w+)|^on:\n {2}(\w+)/m.exec(w)?.slice(1).join(""))).toEqual([
      "pull_request",
      "deployment_status",
      "schedule",
    ]);
    for (const workflow of WORKFLOWS) expect(validateWorkflow(workflow).errors).toEqual([]);
    expect(WORKFLOWS[2]).toMatch(/suites: quick-load/);
  });

  test("every variable the CI files name is one verify reads; no key is an input or a written value", () => {
    const named = [ACTION_TEXT, GITLAB_TEXT, DOC].flatMap((text) => [...text.matchAll(/\bAGENT_[A-Z_]+\b/g)].map((m) => m[0]));
    expect(named.length).toBeGreaterThan(10);
    expect([...new Set(named)].filter((name) => !HARNESS_VARIABLES.has(name))).toEqual([]);
    expect(Object.keys(action.inputs).filter((name) => /key/i.test(name))).toEqual([]);
    const setByAction = action.runs.steps.flatMap((s) => Object.keys(s.env ?? {}));
    const setByGitLab = Object.keys(GitLab.parse(parse(GITLAB_TEXT))[".agent-harness"].variables);
    expect([...setByAction, ...setByGitLab].filter((name) => KEY_VARIABLES.has(name))).toEqual([]);
    expect(KEY_VARIABLES).toContain("AGENT_API_KEY");
  });

  test("the GitLab template keeps the run's folder and reports its junit.xml", () => {
    const job = GitLab.parse(parse(GITLAB_TEXT))[".agent-harness"];
    const dir = job.variables.AGENT_HARNESS_REPORT_DIR;
    expect(job.artifacts.when).toBe("always");
    expect(job.artifacts.paths).toEqual([`${dir}/`]);
    expect(job.artifacts.reports.junit).toBe(`${dir}/*/junit.xml`);
    expect(job.script.at(-1)).toBe("agent-harness verify");
  });
});

/** The expression contexts a composite action's steps read; anything else fails the test until it is simulated. */
interface Contexts {
  inputs: Record<string, string>;
  actionPath: string;
  outputs: Record<string, string>;
}

function expand(text: string, ctx: Contexts): string {
  return text.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, expr: string) => {
    const input = /^inputs\.([\w-]+)$/.exec(expr)?.[1];
    if (input !== undefined) return ctx.inputs[input] ?? "";
    if (expr === "github.action_path") return ctx.actionPath;
    const output = /^steps\.verify\.outputs\.([\w-]+)$/.exec(expr)?.[1];
    if (output !== undefined) return ctx.outputs[output] ?? "";
    throw new Error(`the test does not simulate \${{ ${expr} }}`);
  });
}

/** `steps.verify.outputs.NAME != 'VALUE'`, the one kind of condition the action's own steps use. */
function condition(step: Step, ctx: Contexts): boolean {
  if (step.if === undefined) return true;
  const m = /^steps\.verify\.outputs\.([\w-]+) != '(.*)'$/.exec(step.if);
  if (!m) throw new Error(`the test does not evaluate if: ${step.if}`);
  return (ctx.outputs[m[1] ?? ""] ?? "") !== m[2];
}

interface StepRun {
  code: number | null;
  output: string;
}

/** A `run:` step as the runner runs it: a script file under `bash --noprofile --norc -eo pipefail`. */
function runStep(step: Step, ctx: Contexts, env: Record<string, string>, cwd: string): Promise<StepRun> {
  const script = join(SCRATCH, `step-${Math.random().toString(36).slice(2)}.sh`);
  writeFileSync(script, expand(step.run ?? "", ctx));
  const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(v, ctx)]));
  // the job's environment without this machine's harness or runner variables, then the runner's, the step's
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(AGENT_|GITHUB_)/.test(k)));
  return new Promise((done) => {
    execFile(
      "bash",
      ["--noprofile", "--norc", "-eo", "pipefail", script],
      {
        cwd: step["working-directory"] ? expand(step["working-directory"], ctx) : cwd,
        env: { ...inherited, GITHUB_ACTION_PATH: ctx.actionPath, NO_COLOR: "1", ...env, ...stepEnv },
        timeout: 150_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, output: `${stdout}\n${stderr}` }),
    );
  });
}

/** The action's steps in order, as the runner would take them, with `env` as the workflow's step environment. */
async function runAction(inputs: Record<string, string>, env: Record<string, string>) {
  const workspace = mkdtempSync(join(SCRATCH, "workspace-"));
  const files = { GITHUB_OUTPUT: join(workspace, ".output"), GITHUB_STEP_SUMMARY: join(workspace, ".summary") };
  for (const file of Object.values(files)) writeFileSync(file, "");
  const defaults = Object.fromEntries(Object.entries(action.inputs).map(([name, spec]) => [name, spec.default ?? ""]));
  const ctx: Contexts = { inputs: { ...defaults, ...inputs }, actionPath: ROOT, outputs: {} };
  const steps: { step: Step; run?: StepRun }[] = [];
  for (const step of action.runs.steps) {
    if (step.uses !== undefined || !condition(step, ctx)) {
      steps.push({ step });
      continue;
    }
    const run = await runStep(step, ctx, { ...files, GITHUB_WORKSPACE: workspace, ...env }, workspace);
    steps.push({ step, run });
    for (const line of readFileSync(files.GITHUB_OUTPUT, "utf8").split("\n")) {
      const at = line.indexOf("=");
      if (at > 0) ctx.outputs[line.slice(0, at)] = line.slice(at + 1);
    }
    if (run.code !== 0) break;
  }
  const outputs = Object.fromEntries(Object.entries(action.outputs).map(([name, o]) => [name, expand(o.value, ctx)]));
  const upload = steps.find((s) => s.step.uses?.startsWith("actions/upload-artifact@"))?.step;
  return {
    steps,
    outputs,
    summary: readFileSync(files.GITHUB_STEP_SUMMARY, "utf8"),
    upload: Object.fromEntries(Object.entries(upload?.with ?? {}).map(([k, v]) => [k, expand(v, ctx)])),
  };
}

/** Quick on the embedded server: the smoke checks of one section, one worker. */
const QUICK = { AGENT_HARNESS_SECTIONS: "§2", AGENT_HARNESS_WORKERS: "1", AGENT_HARNESS_SEED: "7" };

describe.concurrent("the action's steps, run as the runner runs them", () => {
  test("a clean run: exit code 0, no finding, the summary passed, the last step skipped", async () => {
    const { steps, outputs, summary, upload } = await runAction({ profile: "smoke" }, QUICK);
    const verify = steps.find((s) => s.step.id === "verify")?.run;
    expect(verify?.code, verify?.output).toBe(0);
    expect(outputs).toMatchObject({ "exit-code": "0", findings: "0" });
    expect(existsSync(outputs.junit ?? "")).toBe(true);
    expect(summary).toMatch(/^### agent-harness verify: ✅ passed\n/);
    expect(summary).not.toContain("#### Findings");
    expect(summary).toMatch(/^\| §2 \| 3 \| 3 \| 3 \| 0 \|/m);
    expect(upload.path).toBe(outputs["report-dir"]);
    expect(steps.at(-1)?.run).toBeUndefined();
  }, 180_000);

  test("base-url given but empty (a secret a fork's run does not get): exit code 2 and the step fails, nothing verified; left out: the embedded server", async () => {
    const { steps, outputs } = await runAction({ "base-url": "", profile: "smoke" }, QUICK);
    const verify = steps.find((s) => s.step.id === "verify")?.run;
    expect(verify?.output).toMatch(/^::error title=agent-harness::the base-url input is empty/m);
    expect(verify?.output).not.toMatch(/passed/);
    expect(outputs["exit-code"]).toBe("2");
    expect(outputs["report-dir"] ?? "").toBe("");
    expect(steps.at(-1)?.run?.code).toBe(2);
    expect(action.inputs["base-url"]?.default).toBe("embedded");
  }, 180_000);

  test("an injected fault: exit code 1, one finding in the outputs and the summary, the step fails with 1", async () => {
    const { steps, outputs, summary, upload } = await runAction(
      { profile: "smoke", "report-dir": "reports" },
      { ...QUICK, AGENT_HARNESS_FAULT: "error-as-string" },
    );
    expect(outputs).toMatchObject({ "exit-code": "1", findings: "1" });
    const runId = outputs["report-dir"]?.split("/").at(-1) ?? "";
    expect(outputs.junit).toBe(`${outputs["report-dir"]}/junit.xml`);
    const junit = readFileSync(outputs.junit ?? "", "utf8");
    expect(junit).toMatch(
      /<testcase classname="findings" name="F1 envelope\.error" time="0\.000" file="suites\/[\w/.-]+" line="\d+">/,
    );
    expect(summary).toMatch(/^### agent-harness verify: ❌ failed\n/);
    expect(summary).toMatch(/^\| \*\*F1\*\* \| `envelope\.error` §2 \| expected error envelope/m);
    expect(outputs["report-dir"]).toMatch(new RegExp(`/reports/${runId}$`));
    expect(summary).toContain(`Reports in \`reports/${runId}\``);
    expect(upload).toEqual({ name: `agent-harness-${runId}`, path: outputs["report-dir"] });
    const last = steps.at(-1);
    expect(last?.step.env).toHaveProperty("EXIT_CODE");
    expect(last?.run?.code).toBe(1);
  }, 180_000);
});
