/** This process's stdin and stdout as a connection's byte streams (the agent side of
 * ACP). Write logs to stderr: anything else printed to stdout corrupts the stream. */

import { fromNodeReadable, toNodeWritable, type ByteSink, type ByteSource } from "./transport.js";

/** Stdin as a `ByteSource` and stdout as a `ByteSink`. */
export function stdioStreams(): { input: ByteSource; output: ByteSink } {
  return { input: fromNodeReadable(process.stdin), output: toNodeWritable(process.stdout) };
}
