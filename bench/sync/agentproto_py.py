"""The sync-channel driver on agentproto's Python SDK (`agentproto.sync`): `Client` (blocking
reads into reused buffers, results handed out as `memoryview`s), the typed `agentproto.sync.tsc`
layer for what differs between servers (`initialize` configured with the release the inputs
name, which fails if the server answers like another one; `Session.open_project`:
`updateSnapshot` on 7.0.2, `createSnapshot` on 7.1), `request_json` for the other JSON calls
(msgspec encodes the params and decodes the result into plain Python values), `request` for
the binary `getSourceFile`, and the lazy `agentproto.sync.ast.SourceFile` reader (both formats).

    python3 agentproto_py.py --tsc PATH --project DIR --inputs INPUTS.json --workload NAME:WARMUP:ITERATIONS ...

Prints one JSON line per workload, the contract of bench/sync/harness.mjs and of the Rust
drivers (bench/README.md, "Sync channel"). Every iteration is timed on its own
(`time.perf_counter_ns`); its preparation (a fresh server, a fetched file) is not.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from agentproto.sync import Client, tsc
from agentproto.sync.ast import SourceFile, kind

clock = time.perf_counter_ns
encode = msgspec.json.encode


def parse_args(argv: list[str]) -> dict[str, Any]:
    args: dict[str, Any] = {"workloads": []}
    for flag, value in zip(argv[::2], argv[1::2], strict=True):
        if flag == "--tsc":
            args["tsc"] = value
        elif flag == "--project":
            args["project"] = value
        elif flag == "--inputs":
            args["inputs"] = json.loads(Path(value).read_text())
        elif flag == "--workload":
            name, warmup, iterations = value.split(":")
            args["workloads"].append({"name": name, "warmup": int(warmup), "iterations": int(iterations)})
        else:
            raise ValueError(f"unknown flag {flag}")
    if not args.get("tsc") or not args.get("inputs") or not str(args.get("project", "")).startswith("/"):
        raise ValueError("--tsc, --inputs and an absolute --project are required")
    return args


class Session:
    """The server every workload but `spawn` and `load-cold` shares, with the project open."""

    def __init__(self, client: Client, typed: tsc.Session, snapshot: int, project: str, roots: int) -> None:
        self.client, self.typed = client, typed
        self.snapshot, self.project, self.roots = snapshot, project, roots


def spawn(args: dict[str, Any]) -> Client:
    return Client.spawn([args["tsc"], "--api", "--cwd", args["project"]], die_with_parent=True)


def initialize(client: Client, args: dict[str, Any]) -> tsc.Session:
    """`initialize` through the typed layer, configured with the release the inputs name."""
    return tsc.initialize(client, tsc.ServerApi(args["inputs"]["server"]))


def open_project(session: tsc.Session, client: Client, tsconfig: str) -> tuple[int, str, int]:
    """The release's method opening the project: (snapshot, project id, root file count)."""
    opened = session.open_project(client, tsconfig)
    project = opened.projects[0]
    return opened.snapshot, project.id, len(project.root_files)


def measure(
    workload: dict[str, Any],
    run: Callable[[Any], Any],
    before: Callable[[], Any] | None = None,
    after: Callable[[Any, Any], None] | None = None,
) -> list[int]:
    """Times `run` once per iteration; `before` and `after` run outside the clock."""
    samples = []
    for index in range(workload["warmup"] + workload["iterations"]):
        state = before() if before else None
        started = clock()
        value = run(state)
        elapsed = clock() - started
        if after:
            after(state, value)
        if index >= workload["warmup"]:
            samples.append(elapsed)
    return samples


class Driver:
    def __init__(self, args: dict[str, Any]) -> None:
        self.args = args
        self.inputs = args["inputs"]
        self.session: Session | None = None

    def shared(self) -> Session:
        if self.session is None:
            client = spawn(self.args)
            try:
                typed = initialize(client, self.args)
                snapshot, project, roots = open_project(typed, client, self.inputs["tsconfig"])
            except BaseException:
                client.close()
                raise
            self.session = Session(client, typed, snapshot, project, roots)
        return self.session

    def close(self) -> None:
        if self.session is not None:
            self.session.client.close()
            self.session = None

    def file_of(self, name: str) -> str:
        return self.inputs["files"][name.split("-", 1)[1]]

    def source_file(self, session: Session, file: str) -> memoryview:
        params = encode({"snapshot": session.snapshot, "project": session.project, "file": file})
        return session.client.request("getSourceFile", params)

    def run(self, workload: dict[str, Any]) -> dict[str, Any]:
        name = workload["name"]
        inputs = self.inputs
        payload = inputs["echo_payload"].encode()
        detail: dict[str, Any] = {}
        if name == "spawn":
            spawn_call: list[int] = []
            count = [0]

            def spawn_and_echo(_: Any) -> tuple[Client, int, bytes]:
                started = clock()
                client = spawn(self.args)
                spawned = clock() - started
                return client, spawned, client.request_bytes("echo", payload)

            def end(_: Any, value: tuple[Client, int, bytes]) -> None:
                client, spawned, answer = value
                client.close()
                if answer != payload:
                    raise RuntimeError(f"echo answered {answer!r}")
                if count[0] >= workload["warmup"]:
                    spawn_call.append(spawned)
                count[0] += 1

            samples = measure(workload, spawn_and_echo, after=end)
            detail = {"spawn_call_ns": spawn_call}
        elif name == "load-cold":

            def fresh() -> tuple[Client, tsc.Session]:
                client = spawn(self.args)
                try:
                    return client, initialize(client, self.args)
                except BaseException:
                    client.close()
                    raise

            def cold(state: tuple[Client, tsc.Session]) -> tuple[int, str, int]:
                client, typed = state
                return open_project(typed, client, inputs["tsconfig"])

            def end_cold(state: tuple[Client, tsc.Session], opened: tuple[int, str, int]) -> None:
                detail["root_files"] = opened[2]
                state[0].close()

            samples = measure(workload, cold, fresh, end_cold)
        elif name == "load-warm":
            session = self.shared()

            def swap(_: Any, opened: tuple[int, str, int]) -> None:
                # Untimed: release the previous snapshot, as disposing it does in the official client.
                session.client.request_json("release", {"snapshot": session.snapshot})
                session.snapshot, _, session.roots = opened

            samples = measure(
                workload, lambda _: open_project(session.typed, session.client, inputs["tsconfig"]), after=swap
            )
            detail = {"root_files": session.roots}
        elif name == "echo":
            client = self.shared().client
            last: list[Any] = [None]

            def keep(_: Any, answer: memoryview) -> None:
                last[0] = answer

            samples = measure(workload, lambda _: client.request("echo", payload), after=keep)
            if bytes(last[0]) != payload:
                raise RuntimeError(f"echo answered {bytes(last[0])!r}")
            detail = {"bytes": len(payload)}
        elif name.startswith("transfer-"):
            file = self.file_of(name)
            session = self.shared()
            sizes: list[int] = []
            samples = measure(
                workload, lambda _: len(self.source_file(session, file)), after=lambda _, n: sizes.append(n)
            )
            detail = {"bytes": sizes[-1]}
        elif name.startswith("materialize-"):
            file = self.file_of(name)
            session = self.shared()

            def walk(data: memoryview) -> int:
                return sum(1 for _ in SourceFile(data).root().descendants())

            def seen(data: memoryview, nodes: int) -> None:
                detail.update(nodes=nodes, bytes=len(data))

            samples = measure(workload, walk, lambda: self.source_file(session, file), seen)
        elif name == "symbol-once":
            session = self.shared()
            file, position = inputs["symbol_file"], inputs["symbol_position"]

            def once(_: Any) -> Any:
                params = {"snapshot": session.snapshot, "project": session.project, "file": file, "position": position}
                return session.client.request_json("getSymbolAtPosition", params)

            symbols: list[Any] = []
            samples = measure(workload, once, after=lambda _, s: symbols.append(s))
            detail = {"name": (symbols[-1] or {}).get("name")}
        elif name == "symbol-each":
            session = self.shared()
            file, positions = inputs["symbol_file"], inputs["positions"]

            def each(_: Any) -> int:
                found = 0
                request_json = session.client.request_json
                for position in positions:
                    params = {"snapshot": session.snapshot, "project": session.project, "file": file}
                    params["position"] = position
                    if request_json("getSymbolAtPosition", params) is not None:
                        found += 1
                return found

            counts: list[int] = []
            samples = measure(workload, each, after=lambda _, n: counts.append(n))
            detail = {"calls": len(positions), "found": counts[-1]}
        elif name == "symbol-batched":
            session = self.shared()
            file, positions = inputs["symbol_file"], inputs["positions"]

            def batched(_: Any) -> list[Any]:
                params = {"snapshot": session.snapshot, "project": session.project, "file": file}
                params["positions"] = positions
                return session.client.request_json("getSymbolsAtPositions", params)

            lists: list[list[Any]] = []
            samples = measure(workload, batched, after=lambda _, v: lists.append(v))
            if len(lists[-1]) != len(positions):
                raise RuntimeError("getSymbolsAtPositions: one answer per position expected")
            detail = {"positions": len(positions), "found": sum(1 for s in lists[-1] if s is not None)}
        elif name == "identifiers":
            session = self.shared()
            source = SourceFile(self.source_file(session, inputs["symbol_file"]))
            starts = []
            for node in source.root().descendants():
                if node.kind == kind.IDENTIFIER:
                    text = bytes(node.text).decode()
                    # Where the text starts: its end minus the text in UTF-16 code units.
                    starts.append(node.end - len(text.encode("utf-16-le")) // 2)
            samples = [0]
            detail = {"file": inputs["symbol_file"], "positions": starts}
        else:
            return {"status": "unsupported", "workload": name, "reason": "no such workload"}
        return {
            "status": "ok",
            "workload": name,
            "warmup": workload["warmup"],
            "iterations": len(samples),
            "samples_ns": samples,
            "detail": detail,
        }


def main() -> int:
    try:
        args = parse_args(sys.argv[1:])
    except (ValueError, OSError) as error:
        print(json.dumps({"status": "error", "error": str(error)}))
        return 2
    driver = Driver(args)
    current = ""
    try:
        for workload in args["workloads"]:
            current = workload["name"]
            print(json.dumps(driver.run(workload)), flush=True)
    except Exception as error:  # reported as the workload's line; the children are ended below
        print(json.dumps({"status": "error", "workload": current, "error": f"{type(error).__name__}: {error}"}))
        return 1
    finally:
        driver.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
