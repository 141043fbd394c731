/**
 * ACP over the network (`agentproto/acp/remote`): Streamable HTTP and WebSocket at one
 * `/acp` endpoint, as the ACP transports RFD describes them, for both roles, on
 * `node:http`, `fetch` and the module's own RFC 6455 code (no dependency).
 *
 * Serving (one agent per ACP connection):
 *
 *     const server = agentServer(() => new MyAgent());
 *     const listening = await listen(server, "127.0.0.1", 8000); // http://127.0.0.1:8000/acp
 *
 * Connecting:
 *
 *     const remote = await connect("http://127.0.0.1:8000/acp", new MyClient(), { websocket: true });
 *     await remote.agent.initialize({ protocolVersion: 1 });
 *
 * Both are the stable v1 surface; `RemoteAgentServer` and `connectRemote` take any
 * surface's `connectAgent` / `connectClient`. The transport is a framing of the one
 * connection runtime (`framing.ts`), so everything stdio guarantees holds here too.
 */

import * as http from "node:http";
import type { AddressInfo } from "node:net";

import type { AcpOptions } from "../options.js";
import * as v1 from "../v1.js";
import { connectRemote, type RemoteAgent, type RemoteOptions } from "./client.js";
import type { ServerLimits } from "./limits.js";
import { RemoteAgentServer } from "./server.js";

export { connectRemote, RemoteAgent, type RemoteOptions } from "./client.js";
export { CookieJar } from "./cookies.js";
export { resolveLimits, type ResolvedLimits, type ServerLimits } from "./limits.js";
export { CONNECTION_ID_HEADER, SESSION_ID_HEADER } from "./routing.js";
export type { ConnectFn, ServedConnection } from "./served.js";
export { RemoteAgentServer, type RemoteServerOptions } from "./server.js";
export { RemoteRefused } from "./ws-client.js";

/** A server of v1 agents: `factory()` makes the agent of each new ACP connection. */
export function agentServer(factory: () => v1.Agent, options: { acp?: AcpOptions; limits?: ServerLimits; path?: string | null } = {}): RemoteAgentServer {
  const path = options.path === undefined ? "/acp" : options.path;
  return new RemoteAgentServer((input, output) => v1.connectAgent(factory(), input, output, options.acp), { path, ...(options.limits === undefined ? {} : { limits: options.limits }) });
}

/** Connects `client` to the v1 agent at `url` (`http://HOST:PORT/acp`) over Streamable
 * HTTP, or over WebSocket with `websocket: true`. */
export function connect(url: string | URL, client: v1.Client, options: RemoteOptions & { acp?: AcpOptions } = {}): Promise<RemoteAgent<v1.AgentConnection>> {
  const size = options.maxMessageSize ?? options.acp?.connection?.maxMessageSize;
  const remote: RemoteOptions = { ...options, ...(size === undefined ? {} : { maxMessageSize: size }) };
  return connectRemote(url, (input, output) => v1.connectClient(client, input, output, options.acp), v1.SURFACE, remote);
}

/** A server listening on a TCP port. */
export interface Listening {
  /** The endpoint: `http://HOST:PORT/acp`. */
  readonly url: string;
  readonly http: http.Server;
  /** Stops accepting, ends every ACP connection, then closes what is left open. */
  close(): Promise<void>;
}

/** Serves `server` on `host`:`port` (port 0: any free port; read it from `url`). Resolves
 * once the socket is bound. */
export async function listen(server: RemoteAgentServer, host: string, port: number): Promise<Listening> {
  // Node checks the header timeout on this period: a fraction of it, so that it holds.
  const interval = Math.max(50, Math.min(server.limits.headersTimeout / 4, 30_000));
  const httpServer = http.createServer({ connectionsCheckingInterval: interval });
  server.attach(httpServer);
  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(port, host, () => {
      httpServer.off("error", reject);
      resolve();
    });
  });
  const address = httpServer.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const closed = new Promise<void>((resolve) => httpServer.once("close", () => resolve()));
  return {
    url: `http://${shown}:${address.port}${server.path ?? "/acp"}`,
    http: httpServer,
    async close() {
      httpServer.close();
      await server.close();
      httpServer.closeAllConnections();
      await closed;
    },
  };
}
