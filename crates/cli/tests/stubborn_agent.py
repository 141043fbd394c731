"""A stand-in agent for the inspect lifecycle tests: it answers every request at
once (`initialize` with version 1, anything else with `{}`) and records its pid.

Usage: stubborn_agent.py DIR MODE

It writes its pid to DIR/agent. MODE says what it does besides:
  stay   keep running after its input ends (as agents that ignore EOF do);
  child  also start `sleep` as a child (pid in DIR/child), then stay;
  exit   exit when its input ends.
"""

import json
import os
import subprocess
import sys
import time


def record(directory: str, name: str, pid: int) -> None:
    # Written then renamed, so a reader never sees half a pid.
    path = os.path.join(directory, name)
    with open(path + ".tmp", "w", encoding="ascii") as f:
        f.write(str(pid))
    os.rename(path + ".tmp", path)


def main() -> int:
    directory, mode = sys.argv[1], sys.argv[2]
    record(directory, "agent", os.getpid())
    if mode == "child":
        child = subprocess.Popen(
            ["sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        record(directory, "child", child.pid)
    for line in sys.stdin:
        message = json.loads(line)
        if "id" in message and "method" in message:
            result = {"protocolVersion": 1} if message["method"] == "initialize" else {}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
            sys.stdout.flush()
    if mode == "exit":
        return 0
    while True:
        time.sleep(60)


if __name__ == "__main__":
    sys.exit(main())
