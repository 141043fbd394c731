import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { FsError, FsRoots, RootError, sliceLines } from "../../src/acp/fs.js";
import { RequestError } from "../../src/jsonrpc/local-error.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "agentproto-fs-")));
const root = join(base, "root");
const outside = join(base, "outside");
mkdirSync(join(root, "sub"), { recursive: true });
mkdirSync(outside);
writeFileSync(join(root, "a.txt"), "one\ntwo\r\nthree\n");
writeFileSync(join(outside, "secret.txt"), "secret");
writeFileSync(join(root, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
symlinkSync(join(outside, "secret.txt"), join(root, "link-out"));
symlinkSync(join(outside, "not-yet.txt"), join(root, "dangling-out"));
symlinkSync("a.txt", join(root, "link-in"));
after(() => rmSync(base, { recursive: true, force: true }));

async function refused(promise: Promise<unknown>, kind: FsError["kind"]): Promise<FsError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof FsError, String(err));
    assert.equal(err.kind, kind, err.message);
    return err;
  }
  assert.fail(`expected a ${kind} refusal`);
}

test("roots must be absolute existing directories", async () => {
  await assert.rejects(FsRoots.of([]), RootError);
  await assert.rejects(FsRoots.of(["relative"]), RootError);
  await assert.rejects(FsRoots.of([join(root, "a.txt")]), RootError);
  await assert.rejects(FsRoots.of([join(base, "missing")]), RootError);
  const roots = await FsRoots.of([root, join(root, ".")]);
  assert.deepEqual(roots.roots, [root]);
  assert.equal(roots.contains(root + "x"), false, "whole components only");
});

test("reads inside the roots, through links that stay inside, with line slicing", async () => {
  const roots = await FsRoots.of([root]);
  assert.equal(await roots.readText(join(root, "a.txt")), "one\ntwo\r\nthree\n");
  assert.equal(await roots.readText(join(root, "link-in"), 2, 1), "two\r\n");
  const answer = await roots.readTextFile({ sessionId: "s", path: join(root, "a.txt"), line: 3 });
  assert.equal(answer.content, "three\n");
});

test("lexical refusals: relative, `..`, NUL; all -32602 at $.params.path", async () => {
  const roots = await FsRoots.of([root]);
  await refused(roots.readText("a.txt"), "not-absolute");
  await refused(roots.readText(`${root}/sub/../a.txt`), "parent-component");
  const nul = await refused(roots.readText(`${root}/a\0.txt`), "nul-byte");
  const error = nul.toErrorObject();
  assert.equal(error.code, -32602);
  assert.equal(JSON.parse(error.data?.text ?? "{}").path, "$.params.path");
});

test("paths that leave the roots are refused whether or not they exist", async () => {
  const roots = await FsRoots.of([root]);
  await refused(roots.readText(join(outside, "secret.txt")), "outside-roots");
  await refused(roots.readText(join(outside, "missing.txt")), "outside-roots");
  await refused(roots.readText(join(root, "link-out")), "outside-roots");
  await refused(roots.writeText(join(root, "dangling-out"), "x"), "outside-roots");
  await refused(roots.writeText(join(outside, "new.txt"), "x"), "outside-roots");
  assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), "secret");
});

test("missing files are -32002 with the path; non-UTF-8 files -32603", async () => {
  const roots = await FsRoots.of([root]);
  const missing = await refused(roots.readText(join(root, "nope.txt")), "not-found");
  assert.deepEqual([missing.toErrorObject().code, JSON.parse(missing.toErrorObject().data?.text ?? "{}")], [-32002, { path: join(root, "nope.txt") }]);
  await refused(roots.readText(join(root, "no-dir", "x.txt")), "not-found");
  const latin = await refused(roots.readText(join(root, "latin1.txt")), "not-utf8");
  assert.equal(latin.toErrorObject().code, -32603);
  await assert.rejects(roots.readTextFile({ sessionId: "s", path: join(root, "nope.txt") }), (e: unknown) => e instanceof RequestError && e.error.code === -32002);
});

test("writes create or replace files inside the roots, never following a link out", async () => {
  const roots = await FsRoots.of([root]);
  await roots.writeTextFile({ sessionId: "s", path: join(root, "sub", "new.txt"), content: "héllo" });
  assert.equal(readFileSync(join(root, "sub", "new.txt"), "utf8"), "héllo");
  await roots.writeText(join(root, "link-in"), "replaced\n");
  assert.equal(readFileSync(join(root, "a.txt"), "utf8"), "replaced\n");
  await refused(roots.writeText(join(root, "missing-dir", "x.txt"), "x"), "not-found");
});

test("sliceLines: 1-based, 0 reads as 1, endings kept, past the end is empty", () => {
  const text = "a\nb\r\nc";
  assert.equal(sliceLines(text), text);
  assert.equal(sliceLines(text, 0, 1), "a\n");
  assert.equal(sliceLines(text, 2), "b\r\nc");
  assert.equal(sliceLines(text, 2, 5), "b\r\nc");
  assert.equal(sliceLines(text, 9), "");
  assert.equal(sliceLines(text, 1, 0), "");
});
