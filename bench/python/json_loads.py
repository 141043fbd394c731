"""Raw-parse baseline, NOT validating: ``json.loads`` into dicts, answers built as
dicts and written with ``json.dumps`` (compact separators). It only checks that the
line is a JSON object.
"""

from __future__ import annotations

import json

from harness import Adapter, main


def decode(kind: str, line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def answer(request_id: int, result: dict) -> str:
    return json.dumps({"jsonrpc": "2.0", "result": result, "id": request_id}, separators=(",", ":"))


if __name__ == "__main__":
    main(
        Adapter(
            decode=decode,
            encode_session_result=lambda i, sid: answer(i, {"sessionId": sid}),
            encode_initialize_result=lambda i: answer(i, {"protocolVersion": 1}),
        )
    )
