import { expect, test } from "vitest";
import { capacityOptionsOf, parseDurationSeconds, parseShard } from "./options.js";
import { exampleTenants } from "./plan.js";

test("--shard x/n numbered from 1 as test runners do, or n with the 0-based index an engine gives (Kubernetes Indexed Job, AWS Batch array)", () => {
  expect(["1/3", "2/3", "3/3"].map((raw) => parseShard(raw, {}))).toEqual([0, 1, 2].map((index) => ({ index, count: 3 })));
  expect(parseShard("3", { JOB_COMPLETION_INDEX: "2" })).toEqual({ index: 2, count: 3 });
  expect(parseShard("4", { AWS_BATCH_JOB_ARRAY_INDEX: "0" })).toEqual({ index: 0, count: 4 });
  expect(parseShard("3", {})).toMatch(/JOB_COMPLETION_INDEX/);
  expect(parseShard("0/3", {})).toMatch(/1 ≤ x ≤ n/);
  expect(parseShard("4/3", {})).toMatch(/1 ≤ x ≤ n/);
  expect(parseShard("3", { JOB_COMPLETION_INDEX: "3" })).toMatch(/0-based, expected 0 ≤ index < 3/);
  expect(parseShard("a/b", {})).toMatch(/expected x\/n/);
});

test("durations, shares and profiles", () => {
  expect([parseDurationSeconds("90", "--d"), parseDurationSeconds("10m", "--d"), parseDurationSeconds("1h", "--d")]).toEqual([
    90, 600, 3600,
  ]);
  expect(parseDurationSeconds("0s", "--duration")).toMatch(/more than 0/);
  // cleanup's --older-than takes 0 (every run's agents), in any unit
  expect(["0", "0s", "0m", "00h"].map((raw) => parseDurationSeconds(raw, "--older-than", { zero: true }))).toEqual([0, 0, 0, 0]);
  expect(parseDurationSeconds("-1", "--older-than", { zero: true })).toMatch(/expected a duration/);
  const tenants = exampleTenants(2, 2, 60);
  expect(capacityOptionsOf(tenants, { share: "80%", duration: "20s" }, {})).toMatchObject({
    share: 0.8,
    durationSeconds: 20,
    rampSeconds: 2,
    profile: "steady",
  });
  expect(capacityOptionsOf(tenants, { share: "1.5" }, {})).toMatch(/--share/);
  expect(capacityOptionsOf(tenants, { profile: "loud" }, {})).toMatch(/noisy-neighbour/);
  expect(capacityOptionsOf(tenants, { duration: "10s", ramp: "10s" }, {})).toMatch(/shorter/);
});

test("the flood's shapes, rate and sockets: noisy-neighbour's only, each checked", () => {
  const tenants = exampleTenants(2, 2, 60);
  const noisy = { profile: "noisy-neighbour" };
  expect(
    capacityOptionsOf(tenants, { ...noisy, flood: "stream-hog, refusal-storm,stream-hog", floodRate: "800" }, {}),
  ).toMatchObject({ floods: ["stream-hog", "refusal-storm"], floodRate: 800 });
  expect(capacityOptionsOf(tenants, { ...noisy, flood: "nonsense" }, {})).toMatch(
    /^--flood "nonsense": a comma-separated list of refusal-storm/,
  );
  for (const floodRate of ["-1", "0", "1.5", "many"])
    expect(capacityOptionsOf(tenants, { ...noisy, floodRate }, {})).toMatch(/^--flood-rate .*more than 0$/);
  expect(capacityOptionsOf(tenants, { ...noisy, floodSockets: "0" }, {})).toMatch(/^--flood-sockets/);
  expect(capacityOptionsOf(tenants, { flood: "stream-hog" }, {})).toMatch(/--profile noisy-neighbour/);
});
