// The sync-channel benchmark's driver on the official asynchronous client shipped inside
// the pinned `typescript` package of the server under test (`typescript/unstable/async` in
// 7.0.2, `typescript/async` in 7.1: JSON-RPC 2.0 with Content-Length framing through
// vscode-jsonrpc, `tsc --api --async`; binary results as base64 in JSON), resolved from the
// install the inputs name, on that install's `tsc` binary. Every call is awaited. The project
// opens with the release's method (`updateSnapshot` in 7.0.2, `createSnapshot` in 7.1). The
// async client has no `echo` method: the echo round trip goes through its generic
// `client.apiRequest("echo", text)` (vscode-jsonrpc sends a string param as `[text]`, which
// the server echoes back). `new API()` spawns nothing: the server starts on the first request.

import { main, officialClient, reap } from "./harness.mjs";

function count(node) {
  let nodes = 0;
  node.forEachChild((child) => {
    nodes += 1 + count(child);
  });
  return nodes;
}

await main(async (args) => {
  const { API, opensWith, rootFiles } = await officialClient(args.inputs, "async");
  return {
    async: true,
    spawn: async (args) => new API({ cwd: args.project, tsserverPath: args.tsc }),
    echo: async (api, text) => {
      const answer = await api.client.apiRequest("echo", text);
      return Array.isArray(answer) ? answer[0] : answer;
    },
    initialize: (api) => api.ensureInitialized(),
    open: async (api, tsconfig) => {
      const snapshot = await api[opensWith]({ openProjects: [tsconfig] });
      const project = snapshot.getProject(tsconfig);
      return { snapshot: { snapshot, project }, roots: rootFiles(project).length };
    },
    release: (_, { snapshot }) => snapshot.dispose(),
    beforeFetch: (api) => api.clearSourceFileCache(),
    fetch: async (_, { project }, file) => (await project.program.getSourceFile(file)).view.byteLength,
    walkable: async (api, { project }, file) => {
      api.clearSourceFileCache();
      const sourceFile = await project.program.getSourceFile(file);
      return { file: sourceFile, bytes: sourceFile.view.byteLength };
    },
    walk: count,
    symbol: async (_, { project }, file, position) => (await project.checker.getSymbolAtPosition(file, position))?.name,
    symbols: (_, { project }, file, positions) => project.checker.getSymbolAtPosition(file, positions),
    close: async (api) => {
      // The server starts on the first request; before one there is nothing to end.
      const child = api.client.process;
      await api.close();
      await reap(child);
    },
  };
});
