#!/usr/bin/env python3
"""Send exact JSON-RPC lines to an ACP agent over stdio and print what comes back.

Usage:
    probe_agent.py [--wait S] [--eof-wait S] LINES_FILE -- AGENT COMMAND...

LINES_FILE holds one message per line, sent byte for byte ("-" reads stdin;
blank lines and lines starting with "#" are skipped). After each line the
script waits up to --wait seconds (default 15) for the answer when the line is
a request with an id, or 2 seconds otherwise. Once every line is sent it closes
the agent's stdin and reports whether the agent exits within --eof-wait
seconds (default 5). Output: "> " sent lines, "< " received stdout lines,
"# " notes. The agent runs in its own process group, which is killed on every
path, so nothing it spawned is left running.

Used by hand to reproduce the third-party findings in crates/check/FINDINGS.md;
not run by `make test` (it needs agents installed from npm).
"""

import json
import os
import pathlib
import queue
import signal
import subprocess
import sys
import threading
import time


def main(argv):
    wait, eof_wait = 15.0, 5.0
    args = argv[1:]
    while args and args[0].startswith("--") and args[0] != "--":
        opt = args.pop(0)
        if opt == "--wait":
            wait = float(args.pop(0))
        elif opt == "--eof-wait":
            eof_wait = float(args.pop(0))
        else:
            sys.exit(f"unknown option {opt}")
    if len(args) < 3 or args[1] != "--":
        sys.exit(__doc__)
    source, command = args[0], args[2:]
    text = sys.stdin.read() if source == "-" else pathlib.Path(source).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]

    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    received = queue.Queue()

    def reader():
        for raw in proc.stdout:
            received.put(raw.decode("utf-8", "replace").rstrip("\n"))
        received.put(None)

    threading.Thread(target=reader, daemon=True).start()
    closed = False

    def drain(until, want_id):
        nonlocal closed
        while not closed:
            left = until - time.monotonic()
            if left <= 0:
                return False
            try:
                line = received.get(timeout=left)
            except queue.Empty:
                return False
            if line is None:
                closed = True
                print("# agent closed its stdout", flush=True)
                return False
            print("< " + line, flush=True)
            if want_id is not None:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if isinstance(msg, dict) and "method" not in msg and msg.get("id") == want_id:
                    return True
        return False

    try:
        for line in lines:
            print("> " + line, flush=True)
            try:
                proc.stdin.write(line.encode("utf-8") + b"\n")
                proc.stdin.flush()
            except BrokenPipeError:
                print("# agent's stdin is closed", flush=True)
                break
            try:
                msg = json.loads(line)
                want = msg.get("id") if isinstance(msg, dict) and "method" in msg and "id" in msg else None
            except ValueError:
                want = None
            if want is not None:
                if not drain(time.monotonic() + wait, want):
                    print(f"# no answer to id {json.dumps(want)} within {wait:g}s", flush=True)
            else:
                drain(time.monotonic() + 2, None)
        proc.stdin.close()
        start = time.monotonic()
        try:
            code = proc.wait(timeout=eof_wait)
            drain(time.monotonic() + 0.2, None)
            print(f"# exited with status {code} {time.monotonic() - start:.1f}s after stdin was closed", flush=True)
        except subprocess.TimeoutExpired:
            drain(time.monotonic() + 0.2, None)
            print(f"# still running {eof_wait:g}s after stdin was closed (killed)", flush=True)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


if __name__ == "__main__":
    main(sys.argv)
