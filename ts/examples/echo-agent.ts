#!/usr/bin/env node
// The command `node ts/dist/examples/echo-agent.js [--delay SECONDS] [--listen HOST:PORT]` (a contract other
// tools rely on): the example of `src/examples/echo-agent.ts` on stdin/stdout or the network.
import { main } from "../src/examples/echo-agent.js";

process.exitCode = await main(process.argv.slice(2));
