/**
 * Environment testcontainers reads, set before it is first used (import this module first).
 *
 * - Ryuk, the reaper sidecar, is an image from a registry; nothing may be pulled here, and
 *   containers are stopped explicitly instead.
 * - Inside a container, testcontainers looks up the host through the `bridge` network or an
 *   `alpine` helper; the daemon runs with `--bridge=none` and containers use host networking,
 *   so the host is the loopback address.
 */
process.env.TESTCONTAINERS_RYUK_DISABLED ??= "true";
process.env.TESTCONTAINERS_HOST_OVERRIDE ??= "127.0.0.1";
