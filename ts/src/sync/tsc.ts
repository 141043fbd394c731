// A typed layer over the TypeScript API server methods that differ between the
// two pinned servers (the Rust crate's `agentproto_sync::tsc`).
//
// The channel is the same for TypeScript 7.0.2 and 7.1.0-beta; the method set
// is not. 7.0.2 opens a project with `updateSnapshot` and answers `initialize`
// with `useCaseSensitiveFileNames`; 7.1.0-beta opens one with `createSnapshot`
// (its `updateSnapshot` takes a base snapshot and changes) and answers
// `initialize` with `caseSensitivity`. File-system callbacks are answered
// differently too (`fsAnswer`), and symbol results are identified differently
// (`symbolIdentity`). `initialize` reads which server it talks to from that
// answer, or checks the one the caller configured against it; nothing is tried
// and retried. Methods whose params and results are the same in both
// (`getSourceFile`, `getSymbolAtPosition`, ...) go through `request` and
// `requestJson` unchanged.

import { FORMAT_V5, FORMAT_V9 } from "./ast.js";
import type { SyncClient } from "./client.js";
import { SyncChannelError } from "./errors.js";

/** The method set of one TypeScript API server release. */
export type ServerApi = "7.0.2" | "7.1.0-beta";

/** Both releases, oldest first. */
export const SERVER_APIS: readonly ServerApi[] = Object.freeze(["7.0.2", "7.1.0-beta"]);

/** The method that creates a snapshot with projects opened. */
export function openProjectMethod(api: ServerApi): "updateSnapshot" | "createSnapshot" {
  return api === "7.0.2" ? "updateSnapshot" : "createSnapshot";
}

/** The binary AST protocol version the server's `getSourceFile` writes. */
export function astVersion(api: ServerApi): number {
  return api === "7.0.2" ? FORMAT_V5.version : FORMAT_V9.version;
}

/** A typed call whose answer does not fit: an unknown server, another server than the configured one, a result without the expected fields. */
export class TscError extends SyncChannelError {
  override readonly name = "TscError";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The method set an `initialize` answer belongs to: `useCaseSensitiveFileNames`
 * (7.0.2) or `caseSensitivity` (7.1.0-beta), exactly one of the two.
 */
export function serverApiFromInitialize(answer: unknown): ServerApi {
  const fields = isRecord(answer) ? answer : {};
  const old = "useCaseSensitiveFileNames" in fields;
  const current = "caseSensitivity" in fields;
  if (old && !current) return "7.0.2";
  if (current && !old) return "7.1.0-beta";
  throw new TscError(
    `\`initialize\` answered ${JSON.stringify(answer)}: expected exactly one of \`useCaseSensitiveFileNames\` (7.0.2) and \`caseSensitivity\` (7.1)`,
  );
}

/** What identifies a symbol result: 7.0.2's `id`, 7.1's `reference` (owner kind, declaring file, id); `undefined` if absent. */
export function symbolIdentity(api: ServerApi, symbol: unknown): unknown {
  return isRecord(symbol) ? symbol[api === "7.0.2" ? "id" : "reference"] : undefined;
}

/** `fsAnswer`'s "no such file" (`readFile`). */
export const MISSING: unique symbol = Symbol("missing");
/** `fsAnswer`'s "use the real file system for this call". */
export const USE_OS: unique symbol = Symbol("useOS");

/**
 * The answer to the file-system callback `callback` in `api`'s encoding:
 * `answer` is the value (the text for `readFile`, a boolean for `fileExists`
 * and `directoryExists`, `{files, directories}` for `getAccessibleEntries`, the
 * path for `realpath`), `MISSING` or `USE_OS`. 7.0.2 takes the bare value
 * (`readFile`'s wrapped in `{"content": …}`) and an empty answer for `USE_OS`;
 * 7.1 takes `{"kind": "value", "value": …}`, `{"kind": "missing"}` or
 * `{"kind": "useOS"}`.
 */
export function fsAnswer(api: ServerApi, callback: string, answer: unknown): string {
  if (api === "7.0.2") {
    if (answer === USE_OS) return "";
    const value = answer === MISSING ? null : answer;
    return JSON.stringify(callback === "readFile" ? { content: value } : value);
  }
  if (answer === MISSING) return JSON.stringify({ kind: "missing" });
  if (answer === USE_OS) return JSON.stringify({ kind: "useOS" });
  return JSON.stringify({ kind: "value", value: answer });
}

/** A project in a snapshot, in the fields both servers report. */
export interface ProjectInfo {
  /** The project id the other methods take. */
  readonly id: string;
  /** The tsconfig file the project was opened from, if any. */
  readonly configFileName: string | undefined;
  /** The root files (7.0.2's `rootFiles`, 7.1's `parsedCommandLine.fileNames`). */
  readonly rootFiles: readonly string[];
}

/** A snapshot created with projects opened. */
export interface OpenedProject {
  readonly snapshot: number;
  readonly projects: readonly ProjectInfo[];
  /** The whole answer, for the fields the two servers do not share. */
  readonly answer: Record<string, unknown>;
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** The server after `initialize`: which method set it speaks and its answer. */
export class TscSession {
  constructor(
    readonly api: ServerApi,
    readonly currentDirectory: string,
    readonly caseSensitive: boolean,
  ) {}

  /** Creates a snapshot with the projects of `tsconfigs` opened (`updateSnapshot` on 7.0.2, `createSnapshot` on 7.1). */
  openProjects(client: SyncClient, tsconfigs: readonly string[]): OpenedProject {
    const method = openProjectMethod(this.api);
    const answer = client.requestJson(method, { openProjects: tsconfigs });
    const shape = (): TscError => new TscError(`\`${method}\` answered ${JSON.stringify(answer)}: expected a snapshot and its projects`);
    if (!isRecord(answer) || typeof answer["snapshot"] !== "number" || !Array.isArray(answer["projects"])) throw shape();
    const projects = answer["projects"].map((project: unknown): ProjectInfo => {
      if (!isRecord(project) || typeof project["id"] !== "string") throw shape();
      const command = project["parsedCommandLine"];
      const rootFiles = this.api === "7.0.2" ? project["rootFiles"] : isRecord(command) ? command["fileNames"] : undefined;
      if (!isStrings(rootFiles)) throw shape();
      const config = project["configFileName"];
      return { id: project["id"], configFileName: typeof config === "string" ? config : undefined, rootFiles };
    });
    return { snapshot: answer["snapshot"], projects, answer };
  }

  /** `openProjects` with one tsconfig. */
  openProject(client: SyncClient, tsconfig: string): OpenedProject {
    return this.openProjects(client, [tsconfig]);
  }

  /** The binary AST of `file` (empty when it is not in the program), a view of the client's reused buffer. */
  sourceFile(client: SyncClient, snapshot: number, project: string, file: string): Uint8Array {
    return client.request("getSourceFile", JSON.stringify({ snapshot, project, file }));
  }

  /** Releases a snapshot (the same `release {snapshot}` on both servers). */
  release(client: SyncClient, snapshot: number): void {
    client.request("release", JSON.stringify({ snapshot }));
  }
}

/** Sends `initialize` and reads which method set the server speaks from its answer; with `configured`, fails unless the answer says the same. */
export function initialize(client: SyncClient, configured?: ServerApi): TscSession {
  const answer = client.requestJson("initialize", null);
  const found = serverApiFromInitialize(answer);
  if (configured !== undefined && configured !== found) {
    throw new TscError(`configured for TypeScript ${configured}, the server answers like ${found}`);
  }
  const fields = answer as Record<string, unknown>;
  const directory = fields["currentDirectory"];
  const sensitivity = found === "7.0.2" ? fields["useCaseSensitiveFileNames"] : fields["caseSensitivity"] === 1;
  if (typeof directory !== "string" || typeof sensitivity !== "boolean") {
    throw new TscError(`\`initialize\` answered ${JSON.stringify(answer)}: expected currentDirectory and a case sensitivity`);
  }
  return new TscSession(found, directory, sensitivity);
}
