/**
 * `agentproto/a2a/server`: the A2A 1.0 server on `node:http` — the binding-neutral core
 * (`A2aCore`), the executor API (`AgentExecutor`, `TaskUpdater`), the store contract
 * (`TaskStore`) with the bounded `MemoryStore` and the durable `SqliteStore`, the HTTP layer (`a2aListener`, a
 * `requestListener`; `A2aHttpServer`, with connection limits and timeouts) and the demo
 * agent. Node only; the client is in `agentproto/a2a`.
 */

export { A2aCore, invalid, type Answer, type CallContext, type CoreOptions, type Interceptor } from "./core.js";
export { TaskUpdater, type AgentExecutor, type ArtifactPiece, type Principal, type RequestContext } from "./executor.js";
export { a2aListener, A2aHttpServer, type A2aListener, type AuthHook, type HttpOptions, type ServerOptions } from "./http.js";
export { MemoryStore, type MemoryStoreOptions } from "./memory-store.js";
export { SqliteStore, type SqliteDriver, type SqliteStoreOptions } from "./sqlite-store.js";
export {
  endsTurn,
  isInterrupted,
  isTerminal,
  StoreError,
  type Commit,
  type Committed,
  type DeadLetter,
  type Delivery,
  type EventPage,
  type EventRecord,
  type LeaseChange,
  type ListPage,
  type ListQuery,
  type PushConfigRecord,
  type StoreErrorKind,
  type TaskKey,
  type TaskRecord,
  type TaskStore,
  type TurnLease,
} from "./store.js";
export { applyChange, view, type Change } from "./tasks.js";
export type { StreamOut } from "./stream.js";
export { PushWorker, type PushOptions } from "./push.js";
export { Recovery, type RecoveryHost, type RecoveryOptions } from "./recovery.js";
export { classify, GuardRefusal, SsrfGuard, type AddressClass, type GuardOptions } from "./push-guard.js";
export { DemoAgent, demoCard, scenario, type DemoOptions } from "./demo.js";
