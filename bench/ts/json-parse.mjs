// Raw-parse baseline, NOT validating: `JSON.parse` into plain objects, answers
// built as object literals and `JSON.stringify`d (seed 000's TypeScript program).
// It only checks that the line is a JSON object.
import { main } from "./harness.mjs";

function decode(_kind, line) {
  try {
    const message = JSON.parse(line);
    return typeof message === "object" && message !== null && !Array.isArray(message);
  } catch {
    return false;
  }
}

main({
  decode,
  encodeSessionResult: (id, sessionId) => JSON.stringify({ jsonrpc: "2.0", result: { sessionId }, id }),
  encodeInitializeResult: (id) => JSON.stringify({ jsonrpc: "2.0", result: { protocolVersion: 1 }, id }),
});
