import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

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

/** "0-2,5" → [0, 1, 2, 5] (the kernel's list format, which taskset -c takes too). */
export function parseCpuList(list: string): number[] {
  return list.split(",").flatMap((part) => {
    if (!/^\d+(-\d+)?$/.test(part)) return [];
    const [from = 0, last = from] = part.split("-").map(Number);
    return Array.from({ length: last - from + 1 }, (_, i) => from + i);
  });
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

/** `command args` on `cpus` (taskset execs it: the child's pid is the command's). */
export function onCpus(cpus: readonly number[], command: string, args: string[]): [string, string[]] {
  return ["taskset", ["-c", cpuList(cpus), command, ...args]];
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

  /** The share (0–1) of the service's cores that other work took between two readings. */
  otherShare(from: CoreReading, to: CoreReading): number {
    const seconds = (to.at - from.at) / 1000;
    if (seconds <= 0) return 0;
    const other = to.busyTicks - from.busyTicks - (to.serviceTicks - from.serviceTicks);
    return Math.max(0, other / TICKS_PER_SECOND / (seconds * this.cpus.length));
  }
}

/**
 * The processes of this machine that hold a listening TCP socket on `port` (/proc/net/tcp and
 * tcp6, then each process's descriptors): the service behind a loopback base URL, all of its
 * processes where several share the socket (a cluster's workers). Empty where /proc does not
 * say, or the socket is another user's.
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
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    const holds = fds.some((fd) => {
      try {
        return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`))?.[1] ?? "");
      } catch {
        return false;
      }
    });
    if (holds) pids.push(Number(entry));
  }
  return pids;
}

/** Every CPU any thread of `pid` may run on, or undefined where /proc does not say. */
function processCpus(pid: number): number[] | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  const cpus = new Set<number>();
  for (const task of tasks) for (const cpu of allowedCpus(`${pid}/task/${task}`) ?? []) cpus.add(cpu);
  return [...cpus].sort((a, b) => a - b);
}

/**
 * A deployment on this machine whose owner pinned it to `cpus` (`load --service-cores`): its
 * processes found by the port of `baseUrl`, each checked to run only there, and this process moved
 * to the other CPUs it may use, as the harness does for a reference it starts. A string says why
 * not, in one line; otherwise the cores, the service's pids, and the function giving this process
 * its CPUs back.
 */
export function claimServiceCores(
  baseUrl: string,
  cpus: readonly number[],
): { cpus: number[]; pids: number[]; release: () => void } | string {
  if (process.platform !== "linux") return "--service-cores needs Linux (/proc and taskset)";
  const mine = allowedCpus();
  if (!mine) return "--service-cores: /proc does not say which CPUs this process may use";
  const others = mine.filter((cpu) => !cpus.includes(cpu));
  if (others.length === 0)
    return `--service-cores ${cpuList(cpus)} leaves the harness no CPU of its own (it may use ${cpuList(mine)})`;
  const url = new URL(baseUrl);
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const pids = listeningProcesses(port);
  if (pids.length === 0)
    return `--service-cores: no process of this machine that the harness may inspect listens on port ${port} (the service must run here, as this user or one it can read)`;
  for (const pid of pids) {
    const on = processCpus(pid);
    const outside = on?.filter((cpu) => !cpus.includes(cpu));
    if (!on || outside?.length)
      return `--service-cores ${cpuList(cpus)}: the service's process ${pid} (listening on port ${port}) may run on CPUs ${on ? cpuList(on) : "unknown"}; pin it first (taskset -a -p -c ${cpuList(cpus)} ${pid})`;
  }
  const release = pinThisProcess(others);
  if (!release) return "--service-cores: taskset could not move the harness off the service's CPUs (is util-linux installed?)";
  return { cpus: [...cpus], pids, release };
}
