// The sync-channel driver on the official synchronous client that ships inside the
// pinned `typescript@7.0.2` (`typescript/unstable/sync`: the pure-JS `SyncRpcChannel` and
// the `API` object over it), resolved from interop/tsc-api/node_modules, on the same
// `tsc` binary. Calls go through its public objects (`API`, `Snapshot`, `Project`,
// `Program`, `Checker`); `echo` through the `Client` the API holds (`api.client.echo`,
// declared private in the typings: the API object has no echo of its own), and the
// explicit `initialize` before a cold load through `ensureInitialized`, which
// `updateSnapshot` otherwise calls first.

import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

import { main, reap } from "./harness.mjs";

const interop = fileURLToPath(new URL("../../interop/tsc-api/package.json", import.meta.url));
const { API } = await import(pathToFileURL(createRequire(interop).resolve("typescript/unstable/sync")).href);

/** Counts every node `forEachChild` reaches below `node` (recursively, as a walk with the official view does). */
function count(node) {
  let nodes = 0;
  node.forEachChild((child) => {
    nodes += 1 + count(child);
  });
  return nodes;
}

function open(api, tsconfig) {
  const snapshot = api.updateSnapshot({ openProjects: [tsconfig] });
  const project = snapshot.getProject(tsconfig);
  return { snapshot: { snapshot, project }, roots: project.rootFiles.length };
}

await main({
  async: false,
  spawn: (args) => new API({ cwd: args.project, tsserverPath: args.tsc }),
  echo: (api, text) => api.client.echo(text),
  initialize: (api) => api.ensureInitialized(),
  open,
  release: (_, { snapshot }) => snapshot.dispose(),
  beforeFetch: (api) => api.clearSourceFileCache(),
  fetch: (_, { project }, file) => project.program.getSourceFile(file).view.byteLength,
  walkable: (api, { project }, file) => {
    api.clearSourceFileCache();
    const sourceFile = project.program.getSourceFile(file);
    return { file: sourceFile, bytes: sourceFile.view.byteLength };
  },
  walk: count,
  symbol: (_, { project }, file, position) => project.checker.getSymbolAtPosition(file, position)?.name,
  symbols: (_, { project }, file, positions) => project.checker.getSymbolAtPosition(file, positions),
  close: async (api) => {
    const child = api.client.channel.child;
    api.close();
    await reap(child);
  },
});
