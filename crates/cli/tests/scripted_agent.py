"""A stand-in agent for the inspect tests: plays its side of a script, byte for byte.

Usage: scripted_agent.py SCRIPT RECEIVED

SCRIPT is JSON: a list of steps {"dir": "c2a" | "a2c", "raw": "<line with its newline>"}.
For "c2a" the agent reads one line from stdin and checks it is exactly "raw"; for
"a2c" it writes "raw" to stdout. Every byte read is also appended to RECEIVED. On a
mismatch it says so on stderr and exits 3.
"""

import json
import sys


def main() -> int:
    script_path, received_path = sys.argv[1], sys.argv[2]
    with open(script_path, encoding="utf-8") as f:
        steps = json.load(f)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    with open(received_path, "wb") as received:
        for number, step in enumerate(steps):
            raw = step["raw"].encode("utf-8")
            if step["dir"] == "a2c":
                stdout.write(raw)
                stdout.flush()
                continue
            line = stdin.readline()
            received.write(line)
            received.flush()
            if line != raw:
                sys.stderr.write(f"step {number}: expected {raw!r}, read {line!r}\n")
                return 3
        # Drain what is left (nothing, in a passing run) until the client closes.
        rest = stdin.read()
        received.write(rest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
