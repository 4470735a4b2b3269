import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    expect: { requireAssertions: true },
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["src/**/*.test.ts"], testTimeout: 20_000 },
      },
      {
        extends: true,
        test: { name: "container", include: ["suites/container/**/*.test.ts"], testTimeout: 180_000, hookTimeout: 300_000 },
      },
    ],
  },
});
