import { afterAll } from "vitest";
import type { ServiceClient } from "../../src/client/index.js";
import type { Agent, CreateAgentBody, MockModel } from "../../src/contract/index.js";
import { Blocked } from "../../src/report/verdict.js";
import { expectOk } from "./assertions.js";
import { clientFor, rememberToken } from "./exchanges.js";
import { target } from "./target.js";

/** Agents made by a test: named with the run prefix, recorded in the ledger, deleted after the test. */
export class AgentFactory {
  private readonly made: string[] = [];
  private seq = 0;

  constructor(
    private readonly api: ServiceClient,
    private readonly label: string,
  ) {}

  name(suffix = ""): string {
    return `${target.runPrefix}${this.label}-${++this.seq}${suffix}`;
  }

  /** Create an agent that must succeed; the test fails with the target's answer otherwise. */
  async create(body: Partial<CreateAgentBody> = {}): Promise<Agent> {
    for (const p of Object.values(body.platforms ?? {})) if (p?.token) rememberToken(p.token);
    // a 429 the pacing did not expect never reaches here: the client waited its Retry-After and
    // sent again, or threw the §7 breach it proves (src/client/refusal.ts)
    const res = await this.api.createAgent({ name: this.name(), ...body } as CreateAgentBody);
    let agent: Agent;
    try {
      agent = expectOk(res, 201);
      this.made.push(agent.id);
    } catch (err) {
      // the check's setup, not its subject: a defect here blocks the check (STYLE §10)
      throw new Blocked(`setup: could not create an agent: ${(err as Error).message.split("\n", 1)[0]}`, "create.created");
    }
    // an agent that is not what the check asked for (another status, another mock model) cannot
    // set up what the check judges: blocked by the create's own finding, not a defect of its own
    const wanted = { status: body.status ?? "active", model: body.modelSettings?.model ?? agent.modelSettings.model };
    if (agent.status !== wanted.status)
      throw new Blocked(
        `setup: POST /agents with status ${wanted.status} made an agent of status ${agent.status}`,
        "create.status",
      );
    if (agent.modelSettings.model !== wanted.model)
      throw new Blocked(
        `setup: POST /agents with model ${wanted.model} made an agent of model ${agent.modelSettings.model}`,
        "create.created",
      );
    return agent;
  }

  /**
   * An agent of a PROFILE §10 mock model. A target that is not reference-compatible would answer
   * that model like any other: there the check is skipped, naming the flag.
   */
  async withMockModel(model: MockModel, skip: (note: string) => never): Promise<Agent> {
    if (!target.referenceFaults) skip(`needs --reference-faults (${model})`);
    return this.create({ modelSettings: { model } });
  }

  track(id: string): void {
    this.made.push(id);
  }

  /** The test deleted this agent itself. */
  forget(id: string): void {
    const i = this.made.indexOf(id);
    if (i !== -1) this.made.splice(i, 1);
  }

  async cleanup(): Promise<void> {
    for (const id of this.made.splice(0)) {
      const res = await this.api.deleteAgent(id);
      if (res.status !== 200 && res.status !== 404)
        throw new Error(`cleanup: DELETE ${id} answered ${res.status} ${res.error?.code ?? ""}`);
    }
  }
}

/**
 * One agent for the checks of a file that leave it as they found it: made on first use (inside a
 * check, so its exchange is judged too) and deleted after the file — a Create and a Delete saved
 * per check (Create is 10 a window). Call at the top of a file or describe.
 */
export function sharedAgent(label: string, body: Partial<CreateAgentBody> = {}): () => Promise<Agent> {
  const factory = new AgentFactory(clientFor(target.keys.main, "main"), label);
  let agent: Promise<Agent> | undefined;
  afterAll(() => factory.cleanup());
  return () => {
    agent ??= factory.create(body);
    return agent;
  };
}
