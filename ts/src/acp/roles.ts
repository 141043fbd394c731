/** Connecting the two roles over byte streams and stdio; each surface's public module
 * (`agentproto/acp/v1`, ...) binds these to its own surface and typed handles. */

import { Connection } from "../jsonrpc/connection.js";
import { stdioStreams } from "../jsonrpc/stdio.js";
import type { Input, Output } from "../jsonrpc/transport.js";
import { AgentRuntime, type ClientConnectionBase } from "./agent.js";
import { ClientRuntime, type AgentConnectionBase } from "./client.js";
import { Endpoint, type RoleSurface } from "./endpoint.js";
import { connectionOptions, type AcpOptions } from "./options.js";

/** The agent side of a connection over any byte streams. Run the returned connection;
 * the handle reaches the client from outside the handlers. */
export function connectAgent<C extends ClientConnectionBase>(
  roles: RoleSurface,
  agent: object,
  input: Input,
  output: Output,
  options: AcpOptions = {},
  connectionType: new (endpoint: Endpoint) => C,
): { connection: Connection; client: C } {
  const runtime = new AgentRuntime(agent, connectionType);
  const connection = new Connection(input, output, runtime, connectionOptions(options, roles.surface));
  const endpoint = new Endpoint(roles, "agent", connection.peer, options);
  runtime.bind(endpoint);
  return { connection, client: new connectionType(endpoint) };
}

/** Serves `agent` on this process's stdin and stdout until stdin closes. */
export async function serveAgentStdio<C extends ClientConnectionBase>(
  roles: RoleSurface,
  agent: object,
  options: AcpOptions = {},
  connectionType: new (endpoint: Endpoint) => C,
): Promise<void> {
  const { input, output } = stdioStreams();
  const { connection } = connectAgent(roles, agent, input, output, options, connectionType);
  try {
    await connection.run();
  } finally {
    // stdin ended: nothing keeps the process alive on its account.
    process.stdin.destroy();
  }
}

/** The client side of a connection over any byte streams. Run the returned connection;
 * call the agent through the handle. */
export function connectClient<A extends AgentConnectionBase>(
  roles: RoleSurface,
  client: object,
  input: Input,
  output: Output,
  options: AcpOptions = {},
  connectionType: new (endpoint: Endpoint) => A,
): { connection: Connection; agent: A } {
  const runtime = new ClientRuntime(client, connectionType);
  const connection = new Connection(input, output, runtime, connectionOptions(options, roles.surface));
  const endpoint = new Endpoint(roles, "client", connection.peer, options);
  runtime.bind(endpoint);
  return { connection, agent: new connectionType(endpoint) };
}
