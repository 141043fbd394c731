"""The reference's two sync-channel examples (the ``py`` blocks of `docs/reference.md`) run: the client against the
real `tsc --api` on a project written here, the server as a program under our client."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

from agentproto.sync import Client
from tests.sync.support import ENV, REPO, TSC_LIB, bounded, tsc_binary

README = Path(__file__).resolve().parents[2] / "docs" / "reference.md"
BLOCKS = re.findall(r"```py\n(.*?)```", README.read_text(), re.DOTALL)


def test_the_readme_has_its_two_sync_examples() -> None:
    assert len(BLOCKS) == 2


def test_the_client_example_counts_identifiers(tmp_path: Path) -> None:
    tsc_binary()
    root = tmp_path.resolve()
    (root / "src").mkdir()
    (root / "tsconfig.json").write_text('{"compilerOptions":{"noLib":true},"files":["src/a.ts"]}')
    (root / "src" / "a.ts").write_text("const alpha = 1;\nfunction beta(gamma: number) { return gamma + alpha; }\n")
    text = (
        BLOCKS[0]
        .replace("/abs/project", str(root))
        .replace('TSC = "interop/tsc-api/', f'TSC = "{REPO}/interop/tsc-api/')
    )
    assert str(TSC_LIB / "tsc") in text
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(text, "README.md", "exec"), {"__name__": "readme"})  # noqa: S102 - our own README
    assert output.getvalue() == "5 identifiers\n"  # alpha, beta, gamma, gamma, alpha


def test_the_server_example_calls_back_into_the_client(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(BLOCKS[1])
    with bounded(Client.spawn([sys.executable, str(server)], env=ENV)) as client:
        client.register_callback("readFile", lambda payload: b"contents of " + payload)
        assert client.request_bytes("read", b"a.ts") == b"read: contents of a.ts"
