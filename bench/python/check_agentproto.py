"""The build check of the ``agentproto-python`` implementation: exits 0 when the
installed ``agentproto`` package is this repository's (python/), 1 otherwise.

The installed distribution's version must be python/pyproject.toml's, and every module
of the imported package must be byte for byte the repository's file (an editable
install imports them from python/src; ``pip install ./python`` copies them).
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "python"


def problems() -> list[str]:
    try:
        import agentproto
    except ImportError as exc:
        return [f"agentproto does not import: {exc}"]
    found: list[str] = []
    wanted = re.search(r'^version = "([^"]+)"', (SOURCE / "pyproject.toml").read_text(), re.M)
    version = importlib.metadata.version("agentproto")
    if wanted is None or version != wanted.group(1) or agentproto.__version__ != version:
        found.append(f"installed agentproto {version} ({agentproto.__version__}), python/pyproject.toml says {wanted}")
    installed = Path(agentproto.__file__).resolve().parent
    repository = SOURCE / "src" / "agentproto"
    for path in sorted(repository.rglob("*.py")):
        copy = installed / path.relative_to(repository)
        if not copy.is_file() or copy.read_bytes() != path.read_bytes():
            found.append(f"{copy} is not the repository's {path.relative_to(SOURCE)}")
    return found


if __name__ == "__main__":
    issues = problems()
    for issue in issues:
        print(issue, file=sys.stderr)
    sys.exit(1 if issues else 0)
