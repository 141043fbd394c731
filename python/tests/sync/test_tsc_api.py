"""The Python client against the real peers: the pinned `tsc --api` of `typescript@7.0.2`
(`npm ci --prefix interop/tsc-api --no-audit --no-fund`) and of `typescript@7.1.0-beta`
(`npm ci --prefix interop/tsc-api/7.1 ...`); missing, these tests fail. Every test runs
against both (the `server` fixture). Source files are checked against the official JS
client's walk of the same server (`walk.mjs`)."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from agentproto.sync import CallbackError, ChildExited, Client, ServerError, SyncError
from agentproto.sync.ast import Node, SourceFile, kind
from agentproto.sync.tsc import MISSING, OpenedProject, ServerApi, TscError, fs_answer, initialize
from tests.sync.support import (
    MAIN_TS,
    POINT_TS,
    SERVERS,
    Project,
    bounded,
    official_walk,
    our_walk,
    running,
    spawn_tsc,
    tsc_lib,
)


@pytest.fixture(params=SERVERS, ids=[api.value for api in SERVERS])
def server(request: pytest.FixtureRequest) -> ServerApi:
    api: ServerApi = request.param
    return api


def open_project(server: ServerApi, client: Client, tsconfig: Path | str) -> tuple[int, str, OpenedProject]:
    """`initialize` (the method set checked against `server`), then the server's way of
    opening `tsconfig`: (snapshot, project id, what it answered)."""
    session = initialize(client, server)
    opened = session.open_project(client, str(tsconfig))
    return opened.snapshot, opened.projects[0].id, opened


def source_file(client: Client, snapshot: int, project: str, file: Path | str) -> memoryview:
    params = {"snapshot": snapshot, "project": project, "file": str(file)}
    return client.request("getSourceFile", json.dumps(params).encode())


def assert_walk_matches_official(server: ServerApi, data: memoryview, cwd: Path, tsconfig: Path, file: Path) -> int:
    """Our reader's walk of `data` equals the official client's walk of the same file."""
    parsed = SourceFile(data)
    assert parsed.format.version == server.ast_version, f"the binary AST version of {server.value}"
    assert parsed.root().kind == parsed.kinds.source_file
    ours = our_walk(parsed)
    official = official_walk(server, cwd, tsconfig, file)[0]
    assert ours == official, f"our walk of {file} differs from the official client's"

    def count(node: Node) -> int:
        return sum(1 + count(child) for child in node.children())

    assert count(parsed.root()) == ours.nodes, "the recursive walk agrees with the stackless one"
    assert_nodes_are_consistent_with_the_text(parsed)
    return ours.nodes


def assert_nodes_are_consistent_with_the_text(parsed: SourceFile) -> None:
    """Every node lies within its parent, and every identifier's text from the string table
    is the file text just before its end (positions count UTF-16 code units)."""
    raw = parsed.text
    assert raw is not None
    text = str(raw, "utf-8")
    utf16 = text.encode("utf-16-le")
    identifiers = 0
    for node in parsed.root().descendants():
        parent = node.parent
        assert parent is not None and parent.pos <= node.pos and node.end <= parent.end, node
        if node.kind == kind.IDENTIFIER:
            name = node.text
            assert name is not None
            units = str(name, "utf-8").encode("utf-16-le")
            assert utf16[2 * node.end - len(units) : 2 * node.end] == units, node
            identifiers += 1
    assert identifiers > 0, "no identifiers checked"


def test_initialize_reports_the_absolute_working_directory(server: ServerApi, tmp_path: Path) -> None:
    project = Project.write(tmp_path)
    with bounded(spawn_tsc(server, project.root)) as client:
        answer = client.request_json("initialize", None)
        # The field that names the case sensitivity tells the two method sets apart.
        if server is ServerApi.V7_0:
            assert answer == {"useCaseSensitiveFileNames": True, "currentDirectory": str(project.root)}
        else:
            assert answer == {"caseSensitivity": 1, "currentDirectory": str(project.root)}
        assert ServerApi.from_initialize(answer) is server


def test_the_typed_layer_reads_the_server_and_checks_the_configured_one(server: ServerApi, tmp_path: Path) -> None:
    project = Project.write(tmp_path)
    with bounded(spawn_tsc(server, project.root)) as client:
        session = initialize(client)
        assert (session.api, session.current_directory, session.case_sensitive) == (server, str(project.root), True)
        other = ServerApi.V7_1 if server is ServerApi.V7_0 else ServerApi.V7_0
        with pytest.raises(TscError, match=f"configured for TypeScript {other.value}"):
            initialize(client, other)
        # The other server's way to open a project is refused by this one.
        with pytest.raises(ServerError):
            client.request(other.open_project_method, b'{"openProjects":[]}')
        opened = session.open_project(client, str(project.tsconfig))
        session.release(client, opened.snapshot)


def test_opening_a_project_loads_its_real_files(server: ServerApi, tmp_path: Path) -> None:
    project = Project.write(tmp_path)
    with bounded(spawn_tsc(server, project.root)) as client:
        _, project_id, opened = open_project(server, client, project.tsconfig)
        assert project_id == str(project.tsconfig)
        assert opened.projects[0].root_files == [str(project.file("point.ts")), str(project.file("main.ts"))]
        assert opened.projects[0].config_file_name == str(project.tsconfig)
        answered = opened.answer["projects"][0]
        options = answered["compilerOptions"] if server is ServerApi.V7_0 else answered["parsedCommandLine"]["options"]
        assert options["strict"] is True


def test_small_source_files_read_like_the_official_client(server: ServerApi, tmp_path: Path) -> None:
    project = Project.write(tmp_path)
    with bounded(spawn_tsc(server, project.root)) as client:
        snapshot, project_id, _ = open_project(server, client, project.tsconfig)
        for name, text in (("point.ts", POINT_TS), ("main.ts", MAIN_TS)):
            path = project.file(name)
            data = source_file(client, snapshot, project_id, path)
            parsed = SourceFile(data)
            assert parsed.text is not None and bytes(parsed.text) == text.encode()
            assert bytes(parsed.file_name or b"") == str(path).encode()
            nodes = assert_walk_matches_official(server, data, project.root, project.tsconfig, path)
            assert nodes > 20, f"{name}: only {nodes} nodes"
        # The identifiers' text comes from the string table.
        parsed = SourceFile(source_file(client, snapshot, project_id, project.file("point.ts")))
        names = [bytes(node.text or b"") for node in parsed.root().descendants() if node.kind == kind.IDENTIFIER]
        assert names[:3] == [b"Point", b"x", b"y"]
        # A file outside the program: an empty result ("undefined").
        assert source_file(client, snapshot, project_id, project.root / "src" / "absent.ts").nbytes == 0


def test_lib_dom_reads_like_the_official_client(server: ServerApi, tmp_path: Path) -> None:
    lib_dom = tsc_lib(server) / "lib.dom.d.ts"
    size = lib_dom.stat().st_size
    assert size > 2_000_000, f"lib.dom.d.ts is {size} bytes"
    root = tmp_path.resolve()
    tsconfig = root / "tsconfig.json"
    tsconfig.write_text(json.dumps({"compilerOptions": {"noLib": True}, "files": [str(lib_dom)]}))
    with bounded(spawn_tsc(server, root)) as client:
        snapshot, project_id, _ = open_project(server, client, tsconfig)
        data = source_file(client, snapshot, project_id, lib_dom)
        assert data.nbytes > 65_536, "a bin32 payload"
        parsed = SourceFile(data)
        assert parsed.text is not None and parsed.text.nbytes == size
        nodes = assert_walk_matches_official(server, data, root, tsconfig, lib_dom)
        assert nodes > 50_000, f"only {nodes} nodes"


def test_symbols_at_positions_single_and_batched(server: ServerApi, tmp_path: Path) -> None:
    project = Project.write(tmp_path)
    with bounded(spawn_tsc(server, project.root)) as client:
        snapshot, project_id, _ = open_project(server, client, project.tsconfig)
        file = str(project.file("point.ts"))
        point, add, in_comment = POINT_TS.index("Point"), POINT_TS.index("add"), POINT_TS.index("Adds")
        where = {"snapshot": snapshot, "project": project_id, "file": file}
        single = client.request_json("getSymbolAtPosition", {**where, "position": point})
        assert single["name"] == "Point"
        batched = client.request_json("getSymbolsAtPositions", {**where, "positions": [point, in_comment, add]})
        assert len(batched) == 3
        assert batched[0]["name"] == "Point"
        identity = server.symbol_identity(single)
        assert identity is not None
        assert server.symbol_identity(batched[0]) == identity, "the same symbol object"
        assert batched[1] is None, "no symbol inside a comment"
        assert batched[2]["name"] == "add"


VFS_ROOT = "/agentproto-virtual/project"
VFS_CALLBACKS = "--callbacks=readFile,fileExists,directoryExists,getAccessibleEntries,realpath"
VIRTUAL_FILES = {
    f"{VFS_ROOT}/tsconfig.json": '{"compilerOptions":{"noLib":true,"strict":true},"files":["src/point.ts","src/main.ts"]}',
    f"{VFS_ROOT}/src/point.ts": POINT_TS,
    f"{VFS_ROOT}/src/main.ts": MAIN_TS,
}


def argument(payload: memoryview) -> str:
    try:
        value = json.loads(bytes(payload))
    except ValueError as error:
        raise CallbackError(f"callback argument is not JSON: {error}") from None
    if not isinstance(value, str):
        raise CallbackError("callback argument is not a JSON string")
    return value


Read = Callable[[ServerApi, memoryview], bytes]
"""A `readFile` callback for one server's encoding."""


def read_file(server: ServerApi, payload: memoryview) -> bytes:
    text = VIRTUAL_FILES.get(argument(payload))
    return fs_answer(server, "readFile", MISSING if text is None else text)


def is_directory(path: str) -> bool:
    prefix = path.rstrip("/") + "/"
    return any(file.startswith(prefix) for file in VIRTUAL_FILES)


def entries(path: str) -> dict[str, list[str]]:
    prefix = path.rstrip("/") + "/"
    files: list[str] = []
    directories: list[str] = []
    for file in VIRTUAL_FILES:
        if file.startswith(prefix):
            rest = file[len(prefix) :]
            if "/" in rest:
                directory = rest.split("/", 1)[0]
                if directory not in directories:
                    directories.append(directory)
            else:
                files.append(rest)
    return {"files": files, "directories": directories}


def virtual_client(server: ServerApi, read: Read = read_file) -> Client:
    """A server whose whole file system is the five callbacks over `VIRTUAL_FILES`, each
    answered in the server's encoding."""
    assert not Path(VFS_ROOT).exists(), f"{VFS_ROOT} must not exist on disk"
    client = spawn_tsc(server, Path(VFS_ROOT), VFS_CALLBACKS)

    def answer(name: str, value: Callable[[str], object]) -> None:
        client.register_callback(name, lambda payload: fs_answer(server, name, value(argument(payload))))

    client.register_callback("readFile", lambda payload: read(server, payload))
    answer("fileExists", lambda path: path in VIRTUAL_FILES)
    answer("directoryExists", is_directory)
    answer("getAccessibleEntries", lambda path: entries(path))
    answer("realpath", lambda path: path)
    return client


def test_a_project_served_from_callbacks_only(server: ServerApi) -> None:
    reads: list[str] = []

    def recording(server: ServerApi, payload: memoryview) -> bytes:
        reads.append(argument(payload))
        return read_file(server, payload)

    with bounded(virtual_client(server, recording)) as client:
        snapshot, project_id, opened = open_project(server, client, f"{VFS_ROOT}/tsconfig.json")
        assert opened.projects[0].root_files == [f"{VFS_ROOT}/src/point.ts", f"{VFS_ROOT}/src/main.ts"]
        for file in VIRTUAL_FILES:
            assert file in reads, f"{file} was not read through the callback: {reads}"
        main = f"{VFS_ROOT}/src/main.ts"
        assert bytes(SourceFile(source_file(client, snapshot, project_id, main)).text or b"") == MAIN_TS.encode()
        # The checker resolves the import across the two virtual files.
        where = {"snapshot": snapshot, "project": project_id, "file": main}
        symbol = client.request_json("getSymbolAtPosition", {**where, "position": MAIN_TS.index("add(origin")})
        assert symbol["name"] == "add"


def failing_read(suffix: str) -> Read:
    def read(server: ServerApi, payload: memoryview) -> bytes:
        if argument(payload).endswith(suffix):
            raise CallbackError("the disk is on fire")
        return read_file(server, payload)

    return read


def open_virtual_project(server: ServerApi, client: Client) -> None:
    assert client.request_json("initialize", None) is not None
    params = json.dumps({"openProjects": [f"{VFS_ROOT}/tsconfig.json"]}).encode()
    client.request(server.open_project_method, params)


def test_a_failed_callback_on_the_request_path_is_a_server_error_with_its_text(server: ServerApi) -> None:
    # The pinned server reads tsconfig.json on the request's own goroutine, recovers the
    # failure and answers the request with an Error tuple carrying the callback's text.
    with bounded(virtual_client(server, failing_read("tsconfig.json"))) as client:
        with pytest.raises(ServerError, match="the disk is on fire"):
            open_virtual_project(server, client)
        assert client.request_bytes("echo", b"after") == b"after"


def test_a_failed_callback_off_the_request_path_ends_the_server_and_fails_cleanly(server: ServerApi) -> None:
    # Source files are read by worker goroutines, where the pinned server does not recover
    # the failure: the process dies, and the request ends with its status.
    with bounded(virtual_client(server, failing_read(".ts"))) as client:
        with pytest.raises(ChildExited) as caught:
            open_virtual_project(server, client)
        assert caught.value.status != 0
        with pytest.raises(ChildExited):
            client.request("echo", b"after")


def test_an_unknown_method_is_a_server_error_with_the_server_text(server: ServerApi, tmp_path: Path) -> None:
    with bounded(spawn_tsc(server, tmp_path.resolve())) as client:
        with pytest.raises(ServerError) as caught:
            client.request("agentprotoNoSuchMethod", b"{}")
        assert "agentprotoNoSuchMethod" in caught.value.text
        assert client.request_bytes("echo", b"still here") == b"still here"


def test_an_echo_of_a_mebibyte_round_trips(server: ServerApi, tmp_path: Path) -> None:
    payload = bytes(index % 241 for index in range(1 << 20))
    with bounded(spawn_tsc(server, tmp_path.resolve())) as client:
        assert client.request("echo", payload) == payload
        assert client.request_bytes("echo", b"") == b""


def test_a_killed_server_is_a_clean_error_and_is_reaped(server: ServerApi, tmp_path: Path) -> None:
    with bounded(spawn_tsc(server, tmp_path.resolve())) as client:
        assert client.request_bytes("echo", b"before") == b"before"
        client.kill()
        with pytest.raises(ChildExited) as caught:
            client.request("echo", b"after")
        assert caught.value.status == -signal.SIGKILL
        assert not running(client.pid), "the server was not reaped"
        with pytest.raises(ChildExited):
            client.request("echo", b"again")


def test_a_server_killed_in_the_middle_of_a_request_is_a_clean_error(server: ServerApi) -> None:
    holder: list[Client] = []

    def kill_then_read(server: ServerApi, payload: memoryview) -> bytes:
        holder[0].kill()  # the first file read kills the server; the callback still answers
        return read_file(server, payload)

    with bounded(virtual_client(server, kill_then_read)) as client:
        holder.append(client)
        with pytest.raises(ChildExited) as caught:
            open_virtual_project(server, client)
        assert caught.value.status == -signal.SIGKILL


def test_closing_ends_and_reaps_the_server(server: ServerApi, tmp_path: Path) -> None:
    client = spawn_tsc(server, tmp_path.resolve())
    with bounded(client):
        assert client.request_bytes("echo", b"x") == b"x"
    assert not running(client.pid)
    with pytest.raises(SyncError):
        client.request("echo", b"x")
