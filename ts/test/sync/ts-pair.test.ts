// Our TypeScript client against our TypeScript server (`src/sync/fixture.ts`).

import { fixtureCases } from "./fixture-cases.js";
import { TS_FIXTURE } from "./support.js";

fixtureCases("ts client, ts fixture", () => [process.execPath, [TS_FIXTURE]]);
