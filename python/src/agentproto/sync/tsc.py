"""A typed layer over the TypeScript API server methods that differ between the two pinned
servers (the Rust crate's `agentproto_sync::tsc`).

The channel is the same for TypeScript 7.0.2 and 7.1.0-beta; the method set is not. 7.0.2
opens a project with `updateSnapshot` and answers `initialize` with
`useCaseSensitiveFileNames`; 7.1.0-beta opens one with `createSnapshot` (its
`updateSnapshot` takes a base snapshot and changes) and answers `initialize` with
`caseSensitivity`. File-system callbacks are answered differently too (`fs_answer`).
`initialize` reads which server it talks to from that answer, or checks the one the caller
configured against it; nothing is tried and retried. Methods whose params and results are
the same in both (`getSourceFile`, `getSymbolAtPosition`, ...) go through
`Client.request` / `Client.request_json` unchanged::

    with Client.spawn([TSC_7_1, "--api", "--cwd", "/abs/project"]) as client:
        session = initialize(client)  # or initialize(client, ServerApi.V7_1)
        opened = session.open_project(client, "/abs/project/tsconfig.json")
        data = session.source_file(client, opened.snapshot, opened.projects[0].id, "/abs/project/a.ts")
        assert SourceFile(data).format.version == 9
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from agentproto.sync.ast import FORMAT_V5, FORMAT_V9
from agentproto.sync.client import Client
from agentproto.sync.errors import SyncError

__all__ = [
    "MISSING",
    "USE_OS",
    "OpenedProject",
    "ProjectInfo",
    "ServerApi",
    "Session",
    "TscError",
    "fs_answer",
    "initialize",
]


class ServerApi(Enum):
    """The method set of one TypeScript API server release; the value is the release."""

    V7_0 = "7.0.2"
    """`updateSnapshot {openProjects}`, binary AST version 5."""
    V7_1 = "7.1.0-beta"
    """`createSnapshot {openProjects}`, binary AST version 9."""

    @property
    def open_project_method(self) -> str:
        """The method that creates a snapshot with projects opened."""
        return "updateSnapshot" if self is ServerApi.V7_0 else "createSnapshot"

    @property
    def ast_version(self) -> int:
        """The binary AST protocol version this server's `getSourceFile` writes."""
        return FORMAT_V5.version if self is ServerApi.V7_0 else FORMAT_V9.version

    def symbol_identity(self, symbol: dict[str, Any]) -> Any:
        """What identifies a symbol result: 7.0.2's `id`, 7.1's `reference` (an owner kind,
        the declaring file's descriptor and an id within it); `None` if absent."""
        return symbol.get("id") if self is ServerApi.V7_0 else symbol.get("reference")

    @staticmethod
    def from_initialize(answer: Any) -> ServerApi:
        """The method set an `initialize` answer belongs to: `useCaseSensitiveFileNames`
        (7.0.2) or `caseSensitivity` (7.1.0-beta), exactly one of the two. Raises
        `TscError` otherwise."""
        fields = answer if isinstance(answer, dict) else {}
        old, new = "useCaseSensitiveFileNames" in fields, "caseSensitivity" in fields
        if old and not new:
            return ServerApi.V7_0
        if new and not old:
            return ServerApi.V7_1
        raise TscError(
            f"`initialize` answered {json.dumps(answer)}: expected exactly one of "
            "`useCaseSensitiveFileNames` (7.0.2) and `caseSensitivity` (7.1)"
        )


class TscError(SyncError):
    """A typed call whose answer does not fit: an unknown server, a server other than the
    configured one, or a result without the expected fields."""


class _Sentinel(Enum):
    MISSING = "missing"
    USE_OS = "useOS"


MISSING: Final = _Sentinel.MISSING
"""`fs_answer`'s "no such file" (`readFile`)."""
USE_OS: Final = _Sentinel.USE_OS
"""`fs_answer`'s "use the real file system for this call"."""


def fs_answer(api: ServerApi, callback: str, answer: Any) -> bytes:
    """The answer to the file-system callback `callback` in `api`'s encoding: `answer` is
    the value (the text for `readFile`, a bool for `fileExists` / `directoryExists`,
    ``{"files", "directories"}`` for `getAccessibleEntries`, the path for `realpath`),
    `MISSING` or `USE_OS`. 7.0.2 takes the bare value (`readFile`'s wrapped in
    ``{"content": ...}``) and an empty answer for `USE_OS`; 7.1 takes
    ``{"kind": "value", "value": ...}``, ``{"kind": "missing"}`` or ``{"kind": "useOS"}``."""
    if api is ServerApi.V7_0:
        if answer is USE_OS:
            return b""
        value = None if answer is MISSING else answer
        return json.dumps({"content": value} if callback == "readFile" else value).encode()
    if isinstance(answer, _Sentinel):
        return json.dumps({"kind": answer.value}).encode()
    return json.dumps({"kind": "value", "value": answer}).encode()


@dataclass(frozen=True, slots=True)
class ProjectInfo:
    """A project in a snapshot, in the fields both servers report."""

    id: str
    """The project id the other methods take."""
    config_file_name: str | None
    """The tsconfig file the project was opened from, if any."""
    root_files: list[str]
    """The root files (7.0.2's `rootFiles`, 7.1's `parsedCommandLine.fileNames`)."""


@dataclass(frozen=True, slots=True)
class OpenedProject:
    """A snapshot created with projects opened."""

    snapshot: int
    projects: list[ProjectInfo]
    answer: dict[str, Any]
    """The whole answer, for the fields the two servers do not share."""


@dataclass(frozen=True, slots=True)
class Session:
    """The server after `initialize`: which method set it speaks and its answer."""

    api: ServerApi
    current_directory: str
    case_sensitive: bool

    def open_projects(self, client: Client, tsconfigs: list[str]) -> OpenedProject:
        """Creates a snapshot with the projects of `tsconfigs` opened (`updateSnapshot` on
        7.0.2, `createSnapshot` on 7.1). Raises `TscError` and what the request raises."""
        method = self.api.open_project_method
        answer = client.request_json(method, {"openProjects": tsconfigs})
        try:
            projects = [self._project_info(project) for project in answer["projects"]]
            snapshot = answer["snapshot"]
            if not isinstance(snapshot, int):
                raise TypeError(snapshot)
        except (KeyError, TypeError, ValueError):
            raise TscError(f"`{method}` answered {json.dumps(answer)}: expected a snapshot and its projects") from None
        return OpenedProject(snapshot, projects, answer)

    def open_project(self, client: Client, tsconfig: str) -> OpenedProject:
        """`open_projects` with one tsconfig."""
        return self.open_projects(client, [tsconfig])

    def _project_info(self, project: dict[str, Any]) -> ProjectInfo:
        files = project["rootFiles"] if self.api is ServerApi.V7_0 else project["parsedCommandLine"]["fileNames"]
        if not isinstance(project["id"], str) or not all(isinstance(file, str) for file in files):
            raise ValueError(project)
        return ProjectInfo(project["id"], project.get("configFileName"), list(files))

    def source_file(self, client: Client, snapshot: int, project: str, file: str) -> memoryview:
        """The binary AST of `file` (empty when it is not in the program), a view of the
        client's reused buffer."""
        params = {"snapshot": snapshot, "project": project, "file": file}
        return client.request("getSourceFile", json.dumps(params).encode())

    def release(self, client: Client, snapshot: int) -> None:
        """Releases a snapshot (the same `release {snapshot}` on both servers)."""
        client.request("release", json.dumps({"snapshot": snapshot}).encode())


def initialize(client: Client, configured: ServerApi | None = None) -> Session:
    """Sends `initialize` and reads which method set the server speaks from its answer;
    with `configured`, raises `TscError` unless the answer says the same."""
    answer = client.request_json("initialize", None)
    found = ServerApi.from_initialize(answer)
    if configured is not None and configured is not found:
        raise TscError(f"configured for TypeScript {configured.value}, the server answers like {found.value}")
    directory = answer.get("currentDirectory")
    sensitivity = answer["useCaseSensitiveFileNames"] if found is ServerApi.V7_0 else answer["caseSensitivity"] == 1
    if not isinstance(directory, str) or not isinstance(sensitivity, bool):
        raise TscError(f"`initialize` answered {json.dumps(answer)}: expected currentDirectory and a case sensitivity")
    return Session(found, directory, sensitivity)
