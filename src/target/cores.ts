import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

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

/** The CPUs this process may run on (`Cpus_allowed_list`), or undefined where /proc does not say. */
export function allowedCpus(pid: number | "self" = "self"): number[] | undefined {
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
    private readonly pid: number,
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
      // /proc/PID/stat: the command may hold spaces; the fields after its ")" start at state (3rd)
      const own = readFileSync(`/proc/${this.pid}/stat`, "utf8");
      const fields = own.slice(own.lastIndexOf(")") + 2).split(" ");
      const serviceTicks = Number(fields[11]) + Number(fields[12]); // utime, stime (14th, 15th)
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
