#!/usr/bin/env node
// The command `node ts/dist/examples/a2a-server.js --addr HOST:PORT [--db FILE | --memory]` (a contract
// other tools rely on): the demo A2A agent of `src/examples/a2a-server.ts`.
import { main } from "../src/examples/a2a-server.js";

process.exitCode = await main(process.argv.slice(2));
