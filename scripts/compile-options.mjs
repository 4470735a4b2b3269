/**
 * How the harness's TypeScript becomes JavaScript, for the package (build-package.mjs) and for a
 * checkout's CLI (checkout-tree.mjs): one file for each, nothing bundled, so every relative import
 * and file URL keeps working and the dependencies stay in node_modules.
 */
export const COMPILE_OPTIONS = {
  bundle: false,
  platform: "node",
  format: "esm",
  // engines: node >= 20.18
  target: "node20",
  legalComments: "none",
  logLevel: "warning",
};
