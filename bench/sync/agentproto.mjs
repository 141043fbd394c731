// The sync-channel driver on agentproto's TypeScript SDK (`agentproto/sync`, imported built
// from ts/dist): `SyncClient` (blocking reads and writes on the pipes' descriptors), the typed
// `tsc` layer for what differs between servers (`tsc.initialize` configured with the release
// the inputs name, which fails if the server answers like another one; `openProject`:
// `updateSnapshot` on 7.0.2, `createSnapshot` on 7.1), `requestJson` for the other JSON calls
// (JSON.stringify / JSON.parse), `request` for the binary `getSourceFile` (a view of the
// client's reused buffer), and the lazy `SourceFile` reader (both AST formats).

import { main, within } from "./harness.mjs";
import { SourceFile, SyncClient, SyntaxKind, tsc } from "../../ts/dist/src/sync/index.js";

const utf8 = new TextDecoder();

function sourceFile(client, snapshot, file) {
  return client.request("getSourceFile", JSON.stringify({ snapshot: snapshot.id, project: snapshot.project, file }));
}

// A server: the client, the release it is configured for, and the typed session once initialized.
function open(server, tsconfig) {
  if (!server.tsc) throw new Error("open before initialize");
  const opened = server.tsc.openProject(server.client, tsconfig);
  const project = opened.projects[0];
  return { snapshot: { id: opened.snapshot, project: project.id }, roots: project.rootFiles.length };
}

await main({
  async: false,
  spawn: (args) => ({
    client: SyncClient.spawn(args.tsc, ["--api", "--cwd", args.project]),
    release: args.inputs.server,
    tsc: undefined,
  }),
  echo: ({ client }, text) => client.requestText("echo", text),
  initialize: (server) => {
    server.tsc = tsc.initialize(server.client, server.release);
  },
  open,
  release: ({ client }, snapshot) => client.requestJson("release", { snapshot: snapshot.id }),
  fetch: ({ client }, snapshot, file) => sourceFile(client, snapshot, file).length,
  walkable: ({ client }, snapshot, file) => {
    const bytes = sourceFile(client, snapshot, file);
    return { file: bytes, bytes: bytes.length };
  },
  walk: (bytes) => {
    let nodes = 0;
    for (const _ of SourceFile.from(bytes).root.descendants()) nodes++;
    return nodes;
  },
  symbol: ({ client }, snapshot, file, position) =>
    client.requestJson("getSymbolAtPosition", { snapshot: snapshot.id, project: snapshot.project, file, position })?.name,
  symbols: ({ client }, snapshot, file, positions) =>
    client.requestJson("getSymbolsAtPositions", { snapshot: snapshot.id, project: snapshot.project, file, positions }),
  identifiers: ({ client }, snapshot, file) => {
    const positions = [];
    for (const node of SourceFile.from(sourceFile(client, snapshot, file)).root.descendants()) {
      if (node.kind !== SyntaxKind.Identifier) continue;
      // Where the identifier's text starts: its end minus the text in UTF-16 code units.
      positions.push(node.end - utf8.decode(node.text).length);
    }
    return positions;
  },
  close: async ({ client }) => {
    client.close();
    // Node reaps the child from its event loop: wait for that, bounded.
    if ((await within(client.exited, 5000)) === "timeout") {
      client.killer().kill();
      throw new Error(`server ${client.pid} not reaped within 5 s`);
    }
  },
});
