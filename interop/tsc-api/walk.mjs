#!/usr/bin/env node
// The reference walk for agentproto's binary source-file reader.
//
// It loads a project with the official synchronous client that ships inside a
// pinned `typescript` package (which spawns the same `tsc --api` binary the
// tests talk to), fetches each named file's AST, walks it with the official
// `forEachChild` and prints one JSON line per file:
//
//   {"file": "...", "nodes": N, "digest": "hex"}
//
// `nodes` counts every node the walk visits below the source file (the source
// file itself is not counted; NodeLists are not nodes, their elements are;
// JSDoc nodes are skipped, as `forEachChild` skips them).
// `digest` is a 64-bit FNV-1a over (kind, pos, end) of each visited node in
// visiting order, each as a little-endian u32, so that a reader which finds the
// right number of nodes in the wrong order or with the wrong spans still fails.
//
// Usage: node walk.mjs [--install DIR] --cwd ABSOLUTE_DIR --project ABSOLUTE_TSCONFIG FILE...
//
// `--install` names the npm folder whose `typescript` to use: this folder
// (7.0.2, the default) or `7.1` (7.1.0-beta). The two clients differ: 7.0.2
// exports the sync client as `typescript/unstable/sync` and opens a project
// with `updateSnapshot`; 7.1 exports it as `typescript/sync` and opens one with
// `createSnapshot`. The package's own version picks between them.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

function parseArguments(argv) {
    const options = { install: dirname(fileURLToPath(import.meta.url)), cwd: undefined, project: undefined, files: [] };
    for (let index = 0; index < argv.length; index++) {
        const argument = argv[index];
        if (argument === "--install") {
            options.install = resolve(argv[++index]);
        } else if (argument === "--cwd") {
            options.cwd = argv[++index];
        } else if (argument === "--project") {
            options.project = argv[++index];
        } else {
            options.files.push(argument);
        }
    }
    if (!options.cwd || !options.project || options.files.length === 0) {
        throw new Error("usage: node walk.mjs --cwd DIR --project TSCONFIG FILE...");
    }
    return options;
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;

function mixU32(hash, value) {
    let mixed = hash;
    for (let shift = 0; shift < 32; shift += 8) {
        mixed ^= BigInt((value >>> shift) & 0xff);
        mixed = (mixed * FNV_PRIME) & MASK_64;
    }
    return mixed;
}

function walkFile(sourceFile) {
    let nodes = 0;
    let digest = FNV_OFFSET;
    const stack = [];
    // An explicit stack keeps deep files from overflowing the JS call stack;
    // children are pushed in reverse so they are visited in `forEachChild` order.
    const pushChildren = node => {
        const children = [];
        node.forEachChild(child => {
            children.push(child);
        });
        for (let index = children.length - 1; index >= 0; index--) {
            stack.push(children[index]);
        }
    };
    pushChildren(sourceFile);
    while (stack.length > 0) {
        const node = stack.pop();
        nodes++;
        digest = mixU32(digest, node.kind >>> 0);
        digest = mixU32(digest, node.pos >>> 0);
        digest = mixU32(digest, node.end >>> 0);
        pushChildren(node);
    }
    return { nodes, digest: digest.toString(16).padStart(16, "0") };
}

/** The install's sync client module and the name of its project-opening method. */
async function loadClient(install) {
    const require = createRequire(join(install, "package.json"));
    const manifest = JSON.parse(readFileSync(require.resolve("typescript/package.json"), "utf8"));
    const legacy = manifest.version.startsWith("7.0.");
    const module = await import(pathToFileURL(require.resolve(legacy ? "typescript/unstable/sync" : "typescript/sync")).href);
    return { API: module.API, open: legacy ? "updateSnapshot" : "createSnapshot" };
}

const options = parseArguments(process.argv.slice(2));
const { API, open } = await loadClient(options.install);
const api = new API({ cwd: options.cwd });
try {
    const snapshot = api[open]({ openProjects: [options.project] });
    const project = snapshot.getProject(options.project);
    if (!project) {
        throw new Error(`no project loaded from ${options.project}`);
    }
    for (const file of options.files) {
        const sourceFile = project.program.getSourceFile(file);
        if (!sourceFile) {
            throw new Error(`${file} is not part of the project`);
        }
        const { nodes, digest } = walkFile(sourceFile);
        process.stdout.write(JSON.stringify({ file, nodes, digest }) + "\n");
    }
} finally {
    api.close();
}
