// Resolve the repository's netlify.toml as Netlify's build does, for one context, offline.
// Prints {"config": …, "logs": {"stdout": […], "stderr": […]}} as JSON on stdout.
// Usage: node resolve-config.mjs --context deploy-preview [--branch NAME] [--repository DIR]
import { resolveConfig } from "@netlify/config";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    context: { type: "string", default: "production" },
    branch: { type: "string", default: "main" },
    repository: { type: "string", default: path.resolve(here, "..", "..") },
  },
});

const result = await resolveConfig({
  repositoryRoot: values.repository,
  cwd: values.repository,
  context: values.context,
  branch: values.branch,
  mode: "buildbot",
  offline: true,
  buffer: true,
  env: {},
});
const { config, logs } = result;
process.stdout.write(JSON.stringify({ config, logs, context: result.context, branch: result.branch }) + "\n");
