/** An agent and a client connected in one process over in-memory pipes: test an agent
 * against a client (or the reverse) without processes. Each surface's public module
 * binds `connectPair` to its own handles (`v1.connectPair(agent, client)`). */

import type { Connection } from "../jsonrpc/connection.js";
import { duplex } from "../jsonrpc/memory.js";
import type { ClientConnectionBase } from "./agent.js";
import type { AgentConnectionBase } from "./client.js";
import type { Endpoint, RoleSurface } from "./endpoint.js";
import type { AcpOptions } from "./options.js";
import * as roles from "./roles.js";

/** The options of each side of a pair. */
export interface PairOptions {
  readonly agent?: AcpOptions;
  readonly client?: AcpOptions;
}

/** Both sides of a running in-process connection. */
export interface Pair<A, C> {
  /** The client's handle to the agent: `initialize`, `newSession`, `prompt`, ... */
  readonly agent: A;
  /** The agent's handle to the client, from outside its handlers. */
  readonly client: C;
  /** The agent side's JSON-RPC connection (running). */
  readonly agentConnection: Connection;
  /** The client side's JSON-RPC connection (running). */
  readonly clientConnection: Connection;
  /** Resolves when both connections have ended; rejects with the first one's failure. */
  readonly done: Promise<void>;
  /** Ends both connections: the client stops writing, the agent sees its input end,
   * finishes (within its `shutdownGrace`) and stops writing in turn. Resolves when both have ended. */
  close(): Promise<void>;
}

export function connectPair<A extends AgentConnectionBase, C extends ClientConnectionBase>(
  surface: RoleSurface,
  agent: object,
  client: object,
  options: PairOptions,
  agentHandle: new (endpoint: Endpoint) => A,
  clientHandle: new (endpoint: Endpoint) => C,
): Pair<A, C> {
  const [agentEnd, clientEnd] = duplex();
  const served = roles.connectAgent(surface, agent, agentEnd.input, agentEnd.output, options.agent, clientHandle);
  const connected = roles.connectClient(surface, client, clientEnd.input, clientEnd.output, options.client, agentHandle);
  const done = Promise.all([served.connection.run(), connected.connection.run()]).then(() => {});
  // Observed here so that a failure nobody awaits is not an unhandled rejection; `done` and `close()` still report it.
  done.catch(() => {});
  return {
    agent: connected.agent,
    client: served.client,
    agentConnection: served.connection,
    clientConnection: connected.connection,
    done,
    async close() {
      await clientEnd.output.close();
      await done;
    },
  };
}
