/**
 * File-system handlers for the client role, confined to a set of root directories (the
 * twin of the Rust SDK's `fs.rs`).
 *
 * A client that advertises `fs.readTextFile` / `fs.writeTextFile` answers the agent's
 * `fs/read_text_file` and `fs/write_text_file`. The agent names any path it likes, so
 * `FsRoots` decides the same way for every request:
 *
 * - the path must be absolute, without a `..` component and without a NUL byte;
 * - once symbolic links are resolved, the file must lie inside one of the roots. A read
 *   resolves the whole path; a write (whose file may not exist yet) resolves the parent
 *   directory and follows the final component if it is a symbolic link, so a link that
 *   points out of the roots is refused even when its target does not exist yet.
 *
 * A path whose resolution leaves the roots is refused whether or not it exists, so the
 * answers do not reveal which files exist outside the roots. Errors map to wire codes as
 * in Rust: refusals -32602 at `$.params.path`; a missing file -32002 with `{"path"}`; a
 * file that is not UTF-8 or any other I/O failure -32603. No error carries file content.
 * The checks and the file operation are separate system calls, so a process that can
 * rewrite the directories under a root in between can still race them.
 */

import { lstat, readFile, readlink, realpath, stat, writeFile } from "node:fs/promises";
import { isAbsolute, posix } from "node:path";

import { encodeString, RawJson } from "../codec/values.js";
import { ErrorCode, invalidParamsError, type ErrorObject } from "../jsonrpc/error.js";
import { RequestError } from "../jsonrpc/local-error.js";
import type { ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest, WriteTextFileResponse } from "../generated/acp/v1.js";

/** The JSON path of the `path` member of both requests. */
export const PARAMS_PATH = "$.params.path";
/** How many symbolic links a write follows before giving up (Linux's own limit). */
export const MAX_SYMLINK_HOPS = 40;

/** A set of roots could not be built: none given, or one not an absolute path to a directory. */
export class RootError extends Error {
  override name = "RootError";
}

/** Why a file-system request was refused or failed; `toErrorObject()` is the answer. */
export class FsError extends Error {
  override name = "FsError";
  /** Refused by a check (as opposed to the file operation failing): -32602 expecting `expected`. */
  readonly expected: string | null;
  readonly kind: "not-absolute" | "parent-component" | "nul-byte" | "outside-roots" | "not-found" | "not-utf8" | "io";

  constructor(kind: FsError["kind"], readonly path: string, message: string, expected: string | null = null) {
    super(message);
    this.kind = kind;
    this.expected = expected;
  }

  get refusal(): boolean {
    return this.expected !== null;
  }

  toErrorObject(): ErrorObject {
    if (this.expected !== null) return invalidParamsError(PARAMS_PATH, this.expected, this.path);
    if (this.kind === "not-found") {
      return { code: ErrorCode.RESOURCE_NOT_FOUND, message: `file not found: \`${this.path}\``, data: new RawJson(`{"path":${encodeString(this.path)}}`) };
    }
    return { code: ErrorCode.INTERNAL_ERROR, message: this.message };
  }
}

const notFound = (path: string): FsError => new FsError("not-found", path, `no such file or directory: \`${path}\``);
const ioFailed = (path: string, err: unknown): FsError => {
  const reason = (err as { code?: string } | null)?.code ?? String(err);
  return new FsError("io", path, `could not access \`${path}\`: ${reason}`);
};

function codeOf(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}

function ioError(path: string, err: unknown): FsError {
  return codeOf(err) === "ENOENT" ? notFound(path) : ioFailed(path, err);
}

/** The checks that need no file system: no NUL byte, absolute, no `..`. */
function checkLexically(path: string): string {
  if (path.includes("\0")) return fail(new FsError("nul-byte", path, `path ${JSON.stringify(path)} contains a NUL byte`, "a path without NUL bytes"));
  if (!posix.isAbsolute(path)) return fail(new FsError("not-absolute", path, `path \`${path}\` is not absolute`, "an absolute path"));
  if (path.split("/").includes("..")) return fail(new FsError("parent-component", path, `path \`${path}\` has a \`..\` component`, "a path without .. components"));
  return path;
}

function fail(err: FsError): never {
  throw err;
}

/** Whether `inner` is `outer` or lies under it, by whole components. */
function within(outer: string, inner: string): boolean {
  if (inner === outer) return true;
  const prefix = outer.endsWith("/") ? outer : outer + "/";
  return inner.startsWith(prefix);
}

/** The root directories file-system requests are confined to (canonicalized once). */
export class FsRoots {
  private constructor(private readonly canonical: readonly string[]) {}

  /** Builds the set; each root must be an absolute path to an existing directory. */
  static async of(roots: Iterable<string>): Promise<FsRoots> {
    const canonical: string[] = [];
    for (const root of roots) {
      if (!isAbsolute(root)) throw new RootError(`root \`${root}\` is not an absolute path`);
      let resolved: string;
      try {
        resolved = await realpath(root);
      } catch (err) {
        throw new RootError(`root \`${root}\` cannot be resolved: ${codeOf(err) ?? String(err)}`);
      }
      if (!(await stat(resolved)).isDirectory()) throw new RootError(`root \`${root}\` is not a directory`);
      if (!canonical.includes(resolved)) canonical.push(resolved);
    }
    if (canonical.length === 0) throw new RootError("no root directory was given");
    return new FsRoots(canonical);
  }

  /** The canonical roots, in the order given (duplicates removed). */
  get roots(): readonly string[] {
    return this.canonical;
  }

  /** Whether a canonical path lies inside (or is) one of the roots. */
  contains(canonical: string): boolean {
    return this.canonical.some((root) => within(root, canonical));
  }

  /** Answers `fs/read_text_file`: the file's text, from line `line` (1-based) for at most `limit` lines. */
  async readTextFile(request: ReadTextFileRequest): Promise<ReadTextFileResponse> {
    try {
      return { content: await this.readText(request.path, request.line ?? null, request.limit ?? null) };
    } catch (err) {
      if (err instanceof FsError) throw RequestError.from(err.toErrorObject());
      throw err;
    }
  }

  /** Answers `fs/write_text_file`: creates the file if needed (its directory must exist) and replaces its content. */
  async writeTextFile(request: WriteTextFileRequest): Promise<WriteTextFileResponse> {
    try {
      await this.writeText(request.path, request.content);
    } catch (err) {
      if (err instanceof FsError) throw RequestError.from(err.toErrorObject());
      throw err;
    }
    return {};
  }

  /** The text of the file at `path` (checked as for a read), sliced by `sliceLines`. */
  async readText(path: string, line: number | null = null, limit: number | null = null): Promise<string> {
    const resolved = await this.resolveRead(path);
    let data: Buffer;
    try {
      data = await readFile(resolved);
    } catch (err) {
      throw ioError(path, err);
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(data);
    } catch {
      throw new FsError("not-utf8", path, `file \`${path}\` is not valid UTF-8`);
    }
    return sliceLines(text, line, limit);
  }

  /** Writes `content` to the file at `path` (checked as for a write). */
  async writeText(path: string, content: string): Promise<void> {
    const resolved = await this.resolveWrite(path);
    try {
      await writeFile(resolved, content, "utf8");
    } catch (err) {
      throw ioError(path, err);
    }
  }

  /** Checks `path` for a read and returns the canonical file to read. */
  async resolveRead(path: string): Promise<string> {
    const requested = checkLexically(path);
    let canonical: string;
    try {
      canonical = await realpath(requested);
    } catch (err) {
      throw await this.missing(path, requested, err);
    }
    if (!this.contains(canonical)) throw this.outside(path);
    return canonical;
  }

  /** Checks `path` for a write and returns the file to write (never a symbolic link). */
  async resolveWrite(path: string): Promise<string> {
    let target = checkLexically(path);
    for (let hop = 0; hop < MAX_SYMLINK_HOPS; hop++) {
      const name = posix.basename(target);
      if (name === "" || target.endsWith("/")) throw new FsError("io", path, `could not access \`${path}\`: not a file path`);
      const parentPath = posix.dirname(target);
      let parent: string;
      try {
        parent = await realpath(parentPath);
      } catch (err) {
        throw await this.missing(path, parentPath, err);
      }
      if (!this.contains(parent)) throw this.outside(path);
      const candidate = posix.join(parent, name);
      let isLink = false;
      try {
        isLink = (await lstat(candidate)).isSymbolicLink();
      } catch (err) {
        if (codeOf(err) !== "ENOENT") throw ioError(path, err);
      }
      if (!isLink) return candidate;
      // An absolute link target stays as it is; a relative one is resolved against the
      // link's directory. Its target is then checked the same way.
      target = posix.resolve(parent, await readlink(candidate));
    }
    throw new FsError("io", path, `could not access \`${path}\`: too many levels of symbolic links`);
  }

  private outside(path: string): FsError {
    const shown = this.canonical.join(", ");
    return new FsError("outside-roots", path, `path \`${path}\` is outside the allowed roots (${shown})`, `a path inside the allowed roots (${shown})`);
  }

  /** Classifies a failure to resolve `missing` (the path or an ancestor): when the
   * deepest ancestor that does resolve lies outside the roots, the path is refused. */
  private async missing(path: string, missing: string, err: unknown): Promise<FsError> {
    let ancestor = missing;
    while (ancestor !== "/") {
      ancestor = posix.dirname(ancestor);
      let canonical: string;
      try {
        canonical = await realpath(ancestor);
      } catch {
        continue;
      }
      if (!this.contains(canonical)) return this.outside(path);
      break;
    }
    const code = codeOf(err);
    if (code === "ENOENT" || code === "ENOTDIR") return notFound(path);
    return ioError(path, err);
  }
}

/** The lines of `text` from `line` (1-based; 0 reads as 1) for at most `limit` lines,
 * with their line endings kept. Lines end at `\n`; a `line` past the end gives "". */
export function sliceLines(text: string, line: number | null = null, limit: number | null = null): string {
  const start = lineStart(text, Math.max(0, (line === null || line === 0 ? 1 : line) - 1));
  if (limit === null) return text.slice(start);
  const rest = text.slice(start);
  return rest.slice(0, lineStart(rest, limit));
}

/** Where line `index` (0-based) starts, or the text's length. */
function lineStart(text: string, index: number): number {
  let at = 0;
  for (let i = 0; i < index; i++) {
    const newline = text.indexOf("\n", at);
    if (newline < 0) return text.length;
    at = newline + 1;
  }
  return at;
}
