#!/usr/bin/env node
// The command `node ts/dist/examples/run-prompt.js [--allow|--reject] [--prompt TEXT] (-- <agent command…> | --url URL [--ws])`
// (a contract other tools rely on): the example of `src/examples/run-prompt.ts`.
import { main } from "../src/examples/run-prompt.js";

process.exitCode = await main(process.argv.slice(2));
