// The sync-channel driver on the official synchronous client that ships inside the
// pinned `typescript` package of the server under test (the pure-JS `SyncRpcChannel` and
// the `API` object over it: `typescript/unstable/sync` in 7.0.2, `typescript/sync` in 7.1),
// resolved from the install the inputs name, on that install's `tsc` binary. Calls go
// through its public objects (`API`, `Snapshot`, `Project`, `Program`, `Checker`); the
// project opens with the release's method (`api.updateSnapshot` in 7.0.2,
// `api.createSnapshot` in 7.1; the root files are `project.rootFiles` in 7.0.2,
// `project.parsedCommandLine.fileNames` in 7.1); `echo` through the `Client` the API holds
// (`api.client.echo`, declared private in the typings: the API object has no echo of its
// own), and the explicit `initialize` through `ensureInitialized`, which opening a project
// otherwise calls first.

import { main, officialClient, reap } from "./harness.mjs";

/** Counts every node `forEachChild` reaches below `node` (recursively, as a walk with the official view does). */
function count(node) {
  let nodes = 0;
  node.forEachChild((child) => {
    nodes += 1 + count(child);
  });
  return nodes;
}

await main(async (args) => {
  const { API, opensWith, rootFiles } = await officialClient(args.inputs, "sync");
  return {
    async: false,
    spawn: (args) => new API({ cwd: args.project, tsserverPath: args.tsc }),
    echo: (api, text) => api.client.echo(text),
    initialize: (api) => api.ensureInitialized(),
    open: (api, tsconfig) => {
      const snapshot = api[opensWith]({ openProjects: [tsconfig] });
      const project = snapshot.getProject(tsconfig);
      return { snapshot: { snapshot, project }, roots: rootFiles(project).length };
    },
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
  };
});
