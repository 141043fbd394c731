/**
 * The writer task: drains the peer's outgoing queue into the output. When there is
 * something to send it first lets the current turn of the event loop finish, so that
 * what the running handlers queue in that turn (a stream of notifications, each
 * awaited) joins the same write: one system call for many messages under load, and a
 * lone message still leaves in the next turn. Cancel notifications set aside while the
 * queue was full go first.
 */

import { Flushed, type Peer } from "./peer.js";
import type { ByteSink } from "./transport.js";

/** Runs until the peer is stopping and its queue is empty, then closes the output.
 * Rejects with the output's error when a write fails (the connection then ends). */
export async function writeLoop(peer: Peer, output: ByteSink): Promise<void> {
  const flushed: Flushed[] = [];
  try {
    for (;;) {
      if (peer.out.length === 0 && peer.overflow.length === 0) {
        if (peer.stopping) break;
        await new Promise<void>((resolve) => (peer.writerWake = resolve));
        continue;
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
      const lines: string[] = peer.overflow.splice(0);
      for (const item of peer.out.splice(0)) {
        if (item instanceof Flushed) flushed.push(item);
        else lines.push(item);
      }
      peer.wakeRoom(Number.MAX_SAFE_INTEGER);
      if (lines.length > 0) {
        lines.push("");
        await output.write(Buffer.from(lines.join("\n"), "utf8"));
      }
      for (const marker of flushed.splice(0)) marker.done.resolve(true);
    }
  } finally {
    for (const marker of flushed) marker.done.resolve(false); // nobody will flush them now
    peer.writerEnded();
    await output.close().catch(() => {});
  }
}
