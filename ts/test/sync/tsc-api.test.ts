// Our client and reader against the real peers: the pinned `tsc --api` of
// `typescript@7.0.2` (`npm ci --prefix interop/tsc-api`) and of
// `typescript@7.1.0-beta` (`npm ci --prefix interop/tsc-api/7.1`); a missing
// binary fails every test here with that instruction. Every test runs against
// both servers.

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { type Node, SourceFile, SyntaxKind } from "../../src/sync/ast.js";
import { type SyncClient } from "../../src/sync/client.js";
import { CallbackError, ChildExitedError, ServerError } from "../../src/sync/errors.js";
import { running } from "../../src/sync/process.js";
import {
  astVersion,
  fsAnswer,
  initialize,
  MISSING,
  type OpenedProject,
  openProjectMethod,
  SERVER_APIS,
  type ServerApi,
  serverApiFromInitialize,
  symbolIdentity,
  TscError,
} from "../../src/sync/tsc.js";
import { MAIN_TS, officialWalk, ourWalk, POINT_TS, Project, tscBinary, tscLibDir, withClient } from "./support.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Runs `body` with `tsc --api --cwd CWD EXTRA…` of `server` as the server. */
function withTsc(server: ServerApi, cwd: string, extra: readonly string[], body: (client: SyncClient) => void | Promise<void>): Promise<void> {
  assert.ok(cwd.startsWith("/"), "tsc --api panics on a relative --cwd");
  return withClient(tscBinary(server), ["--api", "--cwd", cwd, ...extra], body);
}

interface Opened {
  readonly snapshot: number;
  readonly project: string;
  readonly opened: OpenedProject;
}

/** `initialize` (the method set checked against `server`), then the server's way of opening `tsconfig`. */
function openProject(server: ServerApi, client: SyncClient, tsconfig: string): Opened {
  const opened = initialize(client, server).openProject(client, tsconfig);
  const project = opened.projects[0]?.id ?? assert.fail("no project");
  return { snapshot: opened.snapshot, project, opened };
}

/** The bytes of `getSourceFile`, copied out of the client's buffer. */
function sourceFileBytes(client: SyncClient, opened: Opened, file: string): Uint8Array {
  return client.request("getSourceFile", JSON.stringify({ snapshot: opened.snapshot, project: opened.project, file })).slice();
}

/** Our reader's walk of `bytes` equals the official client's walk of the same file; returns the node count. */
async function assertWalkMatchesOfficial(server: ServerApi, bytes: Uint8Array, cwd: string, tsconfig: string, file: string): Promise<number> {
  const source = SourceFile.from(bytes);
  assert.equal(source.format.version, astVersion(server), `the binary AST version of ${server}`);
  assert.equal(source.root.kind, source.kinds.sourceFile);
  const ours = ourWalk(source);
  const [official] = await officialWalk(server, cwd, tsconfig, [file]);
  assert.deepEqual(ours, official, `our walk of ${file} differs from the official client's`);
  // The recursive `forEachChild` walk agrees with the stackless one.
  const count = (node: Node): number => {
    let total = 0;
    node.forEachChild((child) => {
      total += 1 + count(child);
    });
    return total;
  };
  assert.equal(count(source.root), ours.nodes);
  assertNodesConsistentWithText(source);
  return ours.nodes;
}

/**
 * Every node lies within its parent, and every identifier's text from the
 * string table is the file text just before its end (positions count UTF-16
 * code units, as JS strings do).
 */
function assertNodesConsistentWithText(source: SourceFile): void {
  const text = utf8.decode(source.text ?? assert.fail("no source text"));
  let identifiers = 0;
  for (const node of source.root.descendants()) {
    const parent = node.parent ?? assert.fail("a node below the root without a parent");
    assert.ok(parent.pos <= node.pos && node.end <= parent.end, `node ${node.index} outside its parent`);
    if (node.kind === SyntaxKind.Identifier) {
      const name = node.textString ?? assert.fail("an identifier without text");
      assert.equal(text.slice(node.end - name.length, node.end), name, `identifier ${node.index}`);
      identifiers++;
    }
  }
  assert.ok(identifiers > 0, "no identifiers checked");
}

const VFS_ROOT = "/agentproto-virtual/project";
const VFS_CALLBACKS = "--callbacks=readFile,fileExists,directoryExists,getAccessibleEntries,realpath";
const VIRTUAL_FILES = new Map<string, string>([
  [`${VFS_ROOT}/tsconfig.json`, JSON.stringify({ compilerOptions: { noLib: true, strict: true }, files: ["src/point.ts", "src/main.ts"] })],
  [`${VFS_ROOT}/src/point.ts`, POINT_TS],
  [`${VFS_ROOT}/src/main.ts`, MAIN_TS],
]);

const jsonArgument = (payload: Uint8Array): string => {
  const value: unknown = JSON.parse(utf8.decode(payload));
  if (typeof value !== "string") throw new CallbackError("callback argument is not a JSON string");
  return value;
};

/** Registers the five file-system callbacks over `VIRTUAL_FILES`, answered in `server`'s encoding; `readFile` goes through `read`. */
function registerVirtualFs(
  server: ServerApi,
  client: SyncClient,
  read: (path: string) => string | undefined = (path) => VIRTUAL_FILES.get(path),
): void {
  const isDirectory = (path: string): boolean => [...VIRTUAL_FILES.keys()].some((file) => file.startsWith(`${path.replace(/\/$/, "")}/`));
  const answer = (name: string, value: (path: string) => unknown): void => {
    client.registerCallback(name, (payload) => fsAnswer(server, name, value(jsonArgument(payload))));
  };
  answer("readFile", (path) => read(path) ?? MISSING);
  answer("fileExists", (path) => VIRTUAL_FILES.has(path));
  answer("directoryExists", isDirectory);
  answer("getAccessibleEntries", (path) => {
    const prefix = `${path.replace(/\/$/, "")}/`;
    const files: string[] = [];
    const directories: string[] = [];
    for (const file of VIRTUAL_FILES.keys()) {
      if (!file.startsWith(prefix)) continue;
      const rest = file.slice(prefix.length);
      const slash = rest.indexOf("/");
      if (slash < 0) files.push(rest);
      else if (!directories.includes(rest.slice(0, slash))) directories.push(rest.slice(0, slash));
    }
    return { files, directories };
  });
  answer("realpath", (path) => path);
}

/** `initialize`, then the server's way of opening the virtual project; the raw answer. */
function openVirtualProject(server: ServerApi, client: SyncClient): Uint8Array {
  client.requestJson("initialize", null);
  return client.request(openProjectMethod(server), JSON.stringify({ openProjects: [`${VFS_ROOT}/tsconfig.json`] }));
}

for (const server of SERVER_APIS) {
  test(`${server}: initialize reports the absolute working directory`, async () => {
    const project = new Project();
    try {
      await withTsc(server, project.root, [], (client) => {
        const answer = client.requestJson("initialize", null);
        // The field that names the case sensitivity tells the two method sets apart.
        const sensitivity = server === "7.0.2" ? { useCaseSensitiveFileNames: true } : { caseSensitivity: 1 };
        assert.deepEqual(answer, { currentDirectory: project.root, ...sensitivity });
        assert.equal(serverApiFromInitialize(answer), server);
      });
    } finally {
      project.remove();
    }
  });

  test(`${server}: the typed layer reads the method set from the server and checks the configured one`, async () => {
    const project = new Project();
    try {
      await withTsc(server, project.root, [], (client) => {
        const session = initialize(client);
        assert.deepEqual([session.api, session.currentDirectory, session.caseSensitive], [server, project.root, true]);
        const other: ServerApi = server === "7.0.2" ? "7.1.0-beta" : "7.0.2";
        assert.throws(() => initialize(client, other), (error: unknown) => error instanceof TscError && error.message.includes(`configured for TypeScript ${other}`));
        // The other server's way to open a project is refused by this one.
        assert.throws(() => client.request(openProjectMethod(other), '{"openProjects":[]}'), ServerError);
        const opened = session.openProject(client, project.tsconfig);
        session.release(client, opened.snapshot);
      });
    } finally {
      project.remove();
    }
  });

  test(`${server}: opening a project loads its real files`, async () => {
    const project = new Project();
    try {
      await withTsc(server, project.root, [], (client) => {
        const { project: id, opened } = openProject(server, client, project.tsconfig);
        assert.equal(id, project.tsconfig);
        assert.deepEqual(opened.projects[0]?.rootFiles, [project.file("point.ts"), project.file("main.ts")]);
        assert.equal(opened.projects[0]?.configFileName, project.tsconfig);
        const answered = (opened.answer["projects"] as Record<string, Record<string, Record<string, unknown>>>[])[0];
        const options = server === "7.0.2" ? answered?.["compilerOptions"] : answered?.["parsedCommandLine"]?.["options"];
        assert.equal((options as Record<string, unknown> | undefined)?.["strict"], true);
      });
    } finally {
      project.remove();
    }
  });

  test(`${server}: a small source file reads like the official client`, async () => {
    const project = new Project();
    try {
      await withTsc(server, project.root, [], async (client) => {
        const opened = openProject(server, client, project.tsconfig);
        for (const [name, text] of [
          ["point.ts", POINT_TS],
          ["main.ts", MAIN_TS],
        ] as const) {
          const path = project.file(name);
          const bytes = sourceFileBytes(client, opened, path);
          const source = SourceFile.from(bytes);
          assert.equal(utf8.decode(source.text ?? new Uint8Array()), text);
          assert.equal(utf8.decode(source.fileName ?? new Uint8Array()), path);
          const nodes = await assertWalkMatchesOfficial(server, bytes, project.root, project.tsconfig, path);
          assert.ok(nodes > 20, `${name}: only ${nodes} nodes`);
        }
        // The identifiers' text comes from the string table; the view reads the client's buffer in place.
        const source = SourceFile.from(client.request("getSourceFile", JSON.stringify({ snapshot: opened.snapshot, project: opened.project, file: project.file("point.ts") })));
        const names = [...source.root.descendants()].filter((node) => node.kind === SyntaxKind.Identifier).map((node) => node.textString);
        assert.deepEqual(names.slice(0, 3), ["Point", "x", "y"]);
        // A file outside the program: an empty result ("undefined").
        assert.equal(sourceFileBytes(client, opened, join(project.root, "src/absent.ts")).length, 0);
      });
    } finally {
      project.remove();
    }
  });

  test(`${server}: lib.dom.d.ts reads like the official client (same node count and digest)`, async () => {
    const libDom = join(tscLibDir(server), "lib.dom.d.ts");
    tscBinary(server);
    const size = statSync(libDom).size;
    assert.ok(size > 2_000_000, `lib.dom.d.ts is ${size} bytes`);
    const root = realpathSync(mkdtempSync(join(tmpdir(), "agentproto-sync-ts-dom-")));
    try {
      const tsconfig = join(root, "tsconfig.json");
      writeFileSync(tsconfig, JSON.stringify({ compilerOptions: { noLib: true }, files: [libDom] }));
      await withTsc(server, root, [], async (client) => {
        const opened = openProject(server, client, tsconfig);
        const bytes = sourceFileBytes(client, opened, libDom);
        assert.ok(bytes.length > 65_536, "a bin32 payload");
        assert.equal(SourceFile.from(bytes).text?.length, size);
        const nodes = await assertWalkMatchesOfficial(server, bytes, root, tsconfig, libDom);
        assert.ok(nodes > 50_000, `only ${nodes} nodes`);
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test(`${server}: symbols at positions, single and batched`, async () => {
    const project = new Project();
    try {
      await withTsc(server, project.root, [], (client) => {
        const opened = openProject(server, client, project.tsconfig);
        const file = project.file("point.ts");
        const base = { snapshot: opened.snapshot, project: opened.project, file };
        const [point, add, inComment] = ["Point", "add", "Adds"].map((word) => POINT_TS.indexOf(word));
        const single = client.requestJson<{ name: string }>("getSymbolAtPosition", { ...base, position: point }) ?? assert.fail("no symbol");
        assert.equal(single.name, "Point");
        const batched = client.requestJson<({ name: string } | null)[]>("getSymbolsAtPositions", { ...base, positions: [point, inComment, add] });
        assert.equal(batched?.length, 3);
        assert.equal(batched?.[0]?.name, "Point");
        const identity = symbolIdentity(server, single);
        assert.notEqual(identity, undefined);
        assert.deepEqual(symbolIdentity(server, batched?.[0]), identity, "the same symbol object");
        assert.equal(batched?.[1], null, "no symbol inside a comment");
        assert.equal(batched?.[2]?.name, "add");
      });
    } finally {
      project.remove();
    }
  });

  test(`${server}: a project served from callbacks only`, async () => {
    assert.ok(!existsSync(VFS_ROOT), `${VFS_ROOT} must not exist on disk`);
    const reads: string[] = [];
    await withTsc(server, VFS_ROOT, [VFS_CALLBACKS], (client) => {
      registerVirtualFs(server, client, (path) => {
        reads.push(path);
        return VIRTUAL_FILES.get(path);
      });
      const opened = openProject(server, client, `${VFS_ROOT}/tsconfig.json`);
      assert.deepEqual(opened.opened.projects[0]?.rootFiles, [`${VFS_ROOT}/src/point.ts`, `${VFS_ROOT}/src/main.ts`]);
      for (const file of VIRTUAL_FILES.keys()) assert.ok(reads.includes(file), `${file} was not read through the callback`);
      const main = `${VFS_ROOT}/src/main.ts`;
      assert.equal(utf8.decode(SourceFile.from(sourceFileBytes(client, opened, main)).text ?? new Uint8Array()), MAIN_TS);
      // The checker resolves the import across the two virtual files.
      const symbol = client.requestJson<{ name: string }>("getSymbolAtPosition", {
        snapshot: opened.snapshot,
        project: opened.project,
        file: main,
        position: MAIN_TS.indexOf("add(origin"),
      });
      assert.equal(symbol?.name, "add");
    });
  });

  test(`${server}: a failed callback on the request path is a server error with its text, and the channel lives`, async () => {
    // The pinned server reads tsconfig.json on the request's own goroutine,
    // recovers the failure and answers the request with an Error tuple.
    await withTsc(server, VFS_ROOT, [VFS_CALLBACKS], (client) => {
      registerVirtualFs(server, client, (path) => {
        if (path.endsWith("tsconfig.json")) throw new CallbackError("the disk is on fire");
        return VIRTUAL_FILES.get(path);
      });
      assert.throws(() => openVirtualProject(server, client), (error: unknown) => error instanceof ServerError && error.text.includes("the disk is on fire"));
      assert.equal(client.requestText("echo", "after"), "after");
    });
  });

  test(`${server}: a failed callback off the request path ends the server and fails cleanly`, async () => {
    // Source files are read by worker goroutines, where the pinned server does
    // not recover the failure: the process dies, and the request says so.
    await withTsc(server, VFS_ROOT, [VFS_CALLBACKS], (client) => {
      registerVirtualFs(server, client, (path) => {
        if (path.endsWith(".ts")) throw new CallbackError("the disk is on fire");
        return VIRTUAL_FILES.get(path);
      });
      assert.throws(
        () => openVirtualProject(server, client),
        (error: unknown) => error instanceof ChildExitedError && error.status !== undefined && error.status.code !== 0,
      );
      assert.throws(() => client.request("echo", "after"), ChildExitedError);
    });
  });

  test(`${server}: an unknown method is a server error with the server's text`, async () => {
    const project = new Project();
    try {
      await withTsc(server, project.root, [], (client) => {
        assert.throws(
          () => client.request("agentprotoNoSuchMethod", "{}"),
          (error: unknown) => error instanceof ServerError && error.text.includes("agentprotoNoSuchMethod"),
        );
        assert.equal(client.requestText("echo", "still here"), "still here");
      });
    } finally {
      project.remove();
    }
  });

  test(`${server}: an echo of a mebibyte round-trips`, async () => {
    const project = new Project();
    try {
      await withTsc(server, project.root, [], (client) => {
        const payload = Uint8Array.from({ length: 1_048_576 }, (_, index) => index % 241);
        assert.deepEqual(client.request("echo", payload), payload);
        assert.equal(client.request("echo", "").length, 0);
      });
    } finally {
      project.remove();
    }
  });

  test(`${server}: a killed server is a clean error and is dead`, async () => {
    const project = new Project();
    try {
      await withTsc(server, project.root, [], (client) => {
        assert.equal(client.requestText("echo", "before"), "before");
        client.killer().kill();
        assert.throws(() => client.request("echo", "after"), (error: unknown) => error instanceof ChildExitedError && error.status?.signal === "SIGKILL");
        assert.ok(!running(client.pid), "the server is still running");
        // Later requests keep failing the same way, at once.
        assert.throws(() => client.request("echo", "again"), ChildExitedError);
      });
    } finally {
      project.remove();
    }
  });

  test(`${server}: a server killed in the middle of a request is a clean error`, async () => {
    await withTsc(server, VFS_ROOT, [VFS_CALLBACKS], (client) => {
      // The first file read kills the server; the callback still answers.
      registerVirtualFs(server, client, (path) => {
        client.killer().kill();
        return VIRTUAL_FILES.get(path);
      });
      assert.throws(() => openVirtualProject(server, client), (error: unknown) => error instanceof ChildExitedError && error.status?.signal === "SIGKILL");
    });
  });
}
