// Our TypeScript client against the Rust server (`agentproto-sync-fixture`,
// built by `cargo build -p agentproto-sync --bins`; a missing binary fails).

import { fixtureCases } from "./fixture-cases.js";
import { rustFixture } from "./support.js";

fixtureCases("ts client, rust fixture", () => [rustFixture(), []]);
