import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { cpus as machineCpus } from "node:os";

/**
 * Cores of its own for a reference the harness starts in a process apart (a load that floods it).
 * A storm's generator and the service on the same cores time each other: the others' latency under
 * the storm then says nothing of the service, and a storm fault (a limiter that slows everyone
 * while it refuses) cannot be told from the harness's own contention. Split, the service answers
 * on its cores and the generator sends from the rest, and what else ran on the service's cores
 * while a flood lasted is measured (`CoreWatch`), so that a verdict is given only when the service
 * had them.
 *
 * Linux only, with util-linux's `taskset` (Node has no call for a process's CPU affinity); anywhere
 * else, or on fewer than two cores, nothing is split and the service shares the generator's cores
 * as before (its latency under a storm is then judged moot, not blamed).
 */
export interface CoreSplit {
  /** the service's CPUs */
  service: number[];
  /** the generator's (this process's) CPUs */
  generator: number[];
}

/**
 * The CPUs a process may run on (`Cpus_allowed_list`: this one's, a pid's, or one thread's as
 * "PID/task/TID"), or undefined where /proc does not say.
 */
export function allowedCpus(pid: number | "self" | `${number}/task/${string}` = "self"): number[] | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1];
  return list === undefined ? undefined : parseCpuList(list);
}

/**
 * "0-2,5" → [0, 1, 2, 5] (the kernel's list format, which taskset -c takes too), each CPU once, in
 * order; undefined for anything else (a reversed range, a CPU number past any machine's).
 */
export function parseCpuList(list: string): number[] | undefined {
  const cpus = new Set<number>();
  for (const part of list.trim().split(",")) {
    const range = /^(\d{1,4})(?:-(\d{1,4}))?$/.exec(part);
    if (!range) return undefined;
    const from = Number(range[1]);
    const last = Number(range[2] ?? range[1]);
    if (last < from) return undefined;
    for (let cpu = from; cpu <= last; cpu++) cpus.add(cpu);
  }
  return [...cpus].sort((a, b) => a - b);
}

const cpuList = (cpus: readonly number[]) => cpus.join(",");

/**
 * The split for this machine: the upper half of this process's CPUs to the service (one at least),
 * the rest to the generator; undefined when there are fewer than two or `taskset` cannot pin.
 */
export function splitCores(): CoreSplit | undefined {
  if (process.platform !== "linux") return undefined;
  const cpus = allowedCpus();
  if (!cpus || cpus.length < 2) return undefined;
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  const generatorCount = Math.ceil(cpus.length / 2);
  return { generator: cpus.slice(0, generatorCount), service: cpus.slice(generatorCount) };
}

/** `command args` on `cpus` when given (taskset execs it: the child's pid is the command's), else as it is. */
export function onCpus(cpus: readonly number[] | undefined, command: string, args: string[]): [string, string[]] {
  return cpus ? ["taskset", ["-c", cpuList(cpus), command, ...args]] : [command, args];
}

/**
 * Keep this process (every thread of it, and those it starts later) on `cpus`; the returned
 * function gives it back the CPUs it had. Undefined when it could not be pinned (it is as it was).
 */
export function pinThisProcess(cpus: readonly number[]): (() => void) | undefined {
  const before = allowedCpus();
  const pin = (list: readonly number[]) => {
    try {
      execFileSync("taskset", ["-a", "-p", "-c", cpuList(list), String(process.pid)], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  };
  if (!before || !pin(cpus)) return undefined;
  return () => {
    pin(before);
  };
}

/** Clock ticks a second of /proc's CPU times (USER_HZ: 100 on every Linux Node runs on). */
const TICKS_PER_SECOND = 100;

/** One reading of the service's cores: their busy ticks and the service process's own. */
interface CoreReading {
  at: number;
  busyTicks: number;
  serviceTicks: number;
}

/**
 * What else ran on the service's cores over a span: the cores' busy time less the service
 * process's own CPU time, as a share of the cores' time. Time the hypervisor gave another machine
 * (steal) counts as other work; kernel time spent on the service's sockets counts as the service's
 * (the kernel charges it to softirq, not to the process), so irq and softirq are left out.
 */
export class CoreWatch {
  constructor(
    private readonly cpus: readonly number[],
    /** the service's processes (one, or each that holds its listening socket) */
    private readonly pids: readonly number[],
  ) {}

  read(): CoreReading | undefined {
    try {
      const stat = readFileSync("/proc/stat", "utf8");
      let busyTicks = 0;
      for (const cpu of this.cpus) {
        const line = new RegExp(`^cpu${cpu} (.*)$`, "m").exec(stat)?.[1];
        if (!line) return undefined;
        // user nice system idle iowait irq softirq steal …
        const [user = 0, nice = 0, system = 0, , , , , steal = 0] = line.trim().split(/\s+/).map(Number);
        busyTicks += user + nice + system + steal;
      }
      let serviceTicks = 0;
      for (const pid of this.pids) {
        // /proc/PID/stat: the command may hold spaces; the fields after its ")" start at state (3rd)
        const own = readFileSync(`/proc/${pid}/stat`, "utf8");
        const fields = own.slice(own.lastIndexOf(")") + 2).split(" ");
        serviceTicks += Number(fields[11]) + Number(fields[12]); // utime, stime (14th, 15th)
      }
      return { at: performance.now(), busyTicks, serviceTicks };
    } catch {
      return undefined;
    }
  }

  /** The share (0–1) of its cores that the service's own processes took between two readings. */
  ownShare(from: CoreReading, to: CoreReading): number {
    return this.share(to.serviceTicks - from.serviceTicks, from, to);
  }

  /** The share (0–1) of the service's cores that other work took between two readings. */
  otherShare(from: CoreReading, to: CoreReading): number {
    return this.share(to.busyTicks - from.busyTicks - (to.serviceTicks - from.serviceTicks), from, to);
  }

  /** `ticks` of CPU time as a share (0–1) of the watched cores over the span between two readings. */
  private share(ticks: number, from: CoreReading, to: CoreReading): number {
    const seconds = (to.at - from.at) / 1000;
    if (seconds <= 0) return 0;
    return Math.max(0, ticks / TICKS_PER_SECOND / (seconds * this.cpus.length));
  }
}

/** The TCP port of a base URL, its scheme's default when it names none. */
export const portOf = (baseUrl: string) => {
  const url = new URL(baseUrl);
  return Number(url.port || (url.protocol === "https:" ? 443 : 80));
};

/**
 * The processes of this machine that serve `port`: those holding its listening TCP socket
 * (/proc/net/tcp and tcp6, then each process's descriptors) and their descendants (a cluster's
 * workers, handed connections by the process that listens). This process is never one. Empty
 * where /proc does not say, or the socket is another user's.
 */
export function listeningProcesses(port: number): number[] {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st … inode: the state 0A is LISTEN
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      if (state === "0A" && local !== undefined && inode !== undefined && Number.parseInt(local.split(":")[1] ?? "", 16) === port)
        inodes.add(inode);
    }
  }
  if (inodes.size === 0) return [];
  const pids = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number);
  const listening = pids.filter((pid) => pid !== process.pid && holdsSocket(pid, inodes));
  return withDescendants(listening, pids);
}

function holdsSocket(pid: number, inodes: ReadonlySet<string>): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  return fds.some((fd) => {
    try {
      return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? "");
    } catch {
      return false;
    }
  });
}

/** `roots` and every process descending from them (parents read from /proc/PID/stat). */
function withDescendants(roots: readonly number[], all: readonly number[]): number[] {
  const children = new Map<number, number[]>();
  for (const pid of all) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue;
    }
    // the fields after the command's ")": state, then the parent's pid
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  const found = new Set<number>();
  const queue = [...roots];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    if (found.has(pid) || pid === process.pid) continue;
    found.add(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return [...found];
}

/** Every CPU some thread of `pid` may run on; undefined where /proc says nothing of any of them. */
function processCpus(pid: number): number[] | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  const cpus = new Set<number>();
  let read = 0;
  for (const task of tasks) {
    const allowed = allowedCpus(`${pid}/task/${task}`);
    if (!allowed) continue;
    read++;
    for (const cpu of allowed) cpus.add(cpu);
  }
  return read === 0 ? undefined : [...cpus].sort((a, b) => a - b);
}

/**
 * A deployment on this machine whose owner pinned it to `cpus` (`load --service-cores`): its
 * processes found by the port of `baseUrl`, each checked to run only there, and this process moved
 * to the other CPUs it may use, as the harness does for a reference it starts. A string says why
 * not, in one line; otherwise the CPUs the service may run on (what is watched for other work),
 * its pids, and the function giving this process its CPUs back.
 */
export function claimServiceCores(
  baseUrl: string,
  cpus: readonly number[],
): { cpus: number[]; pids: number[]; release: () => void } | string {
  if (process.platform !== "linux") return "--service-cores needs Linux (/proc and taskset)";
  const mine = allowedCpus();
  if (!mine) return "--service-cores: /proc does not say which CPUs this process may use";
  // every CPU the machine has (availableParallelism would count this process's affinity only)
  const present = machineCpus().length;
  const absent = cpus.filter((cpu) => cpu >= present);
  if (absent.length) return `--service-cores ${cpuList(cpus)}: this machine has CPUs 0-${present - 1}, not ${cpuList(absent)}`;
  const others = mine.filter((cpu) => !cpus.includes(cpu));
  if (others.length === 0)
    return `--service-cores ${cpuList(cpus)} leaves the harness no CPU of its own (it may use ${cpuList(mine)})`;
  const port = portOf(baseUrl);
  const pids = listeningProcesses(port);
  if (pids.length === 0)
    return `--service-cores: no process of this machine that the harness may inspect listens on port ${port} (the service must run here, as this user or one it can read)`;
  const used = new Set<number>();
  for (const pid of pids) {
    const on = processCpus(pid);
    const outside = on?.filter((cpu) => !cpus.includes(cpu));
    if (!on || outside?.length)
      return `--service-cores ${cpuList(cpus)}: the service's process ${pid} (serving port ${port}) may run on CPUs ${on ? cpuList(on) : "unknown"}; start the service under taskset -c ${cpuList(cpus)} (its children inherit it)`;
    for (const cpu of on) used.add(cpu);
  }
  const release = pinThisProcess(others);
  if (!release) return "--service-cores: taskset could not move the harness off the service's CPUs (is util-linux installed?)";
  // the service's own CPUs, not all those named: a named CPU it never uses would dilute the other work measured
  return { cpus: [...used].sort((a, b) => a - b), pids, release };
}
