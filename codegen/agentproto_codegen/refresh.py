"""`make spec-refresh`: follow the ACP schema upstream in one command.

    python3 -m agentproto_codegen.refresh                  # newest schema crate on crates.io
    python3 -m agentproto_codegen.refresh --version 1.20.0 # a chosen release
    python3 -m agentproto_codegen.refresh --verify         # the exporter reproduces the pins

**Which source is authoritative.** Upstream generates the ACP JSON Schema from the Rust types
of the crate `agent-client-protocol-schema` (schemars over its `JsonSchema` impls, plus the
method tables it exports); the JSON files bundled in the npm SDK (`@agentclientprotocol/sdk`,
`schema/`) and the Python SDK are copies of one such generation, made when those SDKs were
released, so they lag the crate (on 2026-11-29: npm 2.4.0 carries the schema of crate 1.15.1
while the crate is at 1.20.0). No registry we reach ships the newer JSON itself, so the crate is
the source: `codegen/schema-export` builds the schema from the crate's types with upstream's
generator settings, and `--verify` proves that for the pinned crate version it writes exactly
the files that were pinned (JSON-equal, member order included) before anything is replaced.

A refresh: asks the registries for the newest versions (crates.io's index for the crate; npm
and PyPI for the SDKs, reported only), exports the four surfaces (v1, v1 unstable, v2 draft, v2
unstable: schema and method table each) into `spec/acp/`, rewrites their entries in
`spec/PINNED.json` (provenance, sha256), regenerates every language (`python3 -m
agentproto_codegen`) and prints what changed, from a diff of the model dumps
(`codegen/model/acp-*.json`): declarations, fields, variants, enum values and methods added,
removed or changed, and stability moves. The tests then say what the change breaks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXPORT = ROOT / "codegen/schema-export"
TARGET = ROOT / "target/schema-export"
CRATE = "agent-client-protocol-schema"
INDEX_URL = "https://index.crates.io/ag/en/agent-client-protocol-schema"
NPM_URL = "https://registry.npmjs.org/@agentclientprotocol%2Fsdk"
PYPI_URL = "https://pypi.org/pypi/agent-client-protocol/json"

# (folder under spec/acp, file suffix, cargo features of the exporter)
SURFACES = [
    ("v1", "", ""),
    ("v1", ".unstable", "unstable"),
    ("v2", "", "v2"),
    ("v2", ".unstable", "v2 unstable"),
]


def fetch_json_lines(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(url, timeout=60) as answer:
        return [json.loads(line) for line in answer.read().decode().splitlines() if line.strip()]


def newest_crate() -> str:
    """The newest release of the schema crate on crates.io (not yanked, no pre-release)."""
    versions = [
        e["vers"] for e in fetch_json_lines(INDEX_URL) if not e.get("yanked") and "-" not in e["vers"]
    ]
    return max(versions, key=lambda v: tuple(int(p) for p in v.split(".")))


def sdk_versions() -> dict[str, str]:
    """The newest SDK releases, for the report (their bundled schemas are copies, see above)."""
    found = {}
    for name, url, pick in (
        ("npm @agentclientprotocol/sdk", NPM_URL, lambda d: d["dist-tags"]["latest"]),
        ("PyPI agent-client-protocol", PYPI_URL, lambda d: d["info"]["version"]),
    ):
        try:
            with urllib.request.urlopen(url, timeout=60) as answer:
                found[name] = pick(json.load(answer))
        except OSError as err:  # the report says so; the refresh does not depend on it
            found[name] = f"unknown ({err})"
    return found


def pinned_crate_version() -> str | None:
    """The crate version the ACP pins were exported from (`None`: they were not)."""
    for entry in json.loads((ROOT / "spec/PINNED.json").read_text())["files"]:
        if entry["file"] == "acp/v1/schema.json":
            return entry.get("crate_version")
    return None


def set_crate_version(version: str) -> None:
    manifest = EXPORT / "Cargo.toml"
    text = manifest.read_text()
    new = re.sub(rf'{CRATE} = {{ version = "=[^"]+"', f'{CRATE} = {{ version = "={version}"', text)
    manifest.write_text(new)
    cargo("update", "-p", CRATE, "--precise", version)


def cargo(*args: str) -> None:
    env = {**os.environ, "CARGO_TARGET_DIR": str(TARGET)}
    command, *rest = args
    manifest = ["--manifest-path", str(EXPORT / "Cargo.toml")]
    subprocess.run(["cargo", command, *manifest, *rest], check=True, env=env)


def export(out: Path) -> dict[str, Path]:
    """Every surface's schema and method table, written under `out` as spec/acp lays them out."""
    written = {}
    for folder, suffix, features in SURFACES:
        (out / folder).mkdir(parents=True, exist_ok=True)
        schema = out / folder / f"schema{suffix}.json"
        meta = out / folder / f"meta{suffix}.json"
        cargo("run", "--quiet", "--features", features, "--", str(schema), str(meta))
        written[f"acp/{folder}/schema{suffix}.json"] = schema
        written[f"acp/{folder}/meta{suffix}.json"] = meta
    return written


def verify(scratch: Path) -> list[str]:
    """Differences between the pinned ACP files and the exporter's output for the crate version
    they were made from (empty: the exporter reproduces them)."""
    version = pinned_crate_version()
    if version is None:
        return ["spec/PINNED.json names no crate_version for the ACP files"]
    set_crate_version(version)
    problems = []
    for rel, path in export(scratch).items():
        pinned = json.loads((ROOT / "spec" / rel).read_text())
        ours = json.loads(path.read_text())
        if json.dumps(pinned) != json.dumps(ours):
            problems.append(f"{rel}: the export of {CRATE} {version} differs from the pinned file")
    return problems


def install(written: dict[str, Path], version: str) -> None:
    """Copies the export into spec/ and rewrites the ACP entries of spec/PINNED.json."""
    pins_path = ROOT / "spec/PINNED.json"
    pins = json.loads(pins_path.read_text())
    for rel, path in written.items():
        data = path.read_bytes()
        (ROOT / "spec" / rel).write_bytes(data)
        entry = next(e for e in pins["files"] if e["file"] == rel)
        entry.clear()
        entry.update(
            {
                "file": rel,
                "sha256": hashlib.sha256(data).hexdigest(),
                "repo": f"crates.io:{CRATE}@{version}",
                "revision": version,
                "path": "(generated by codegen/schema-export from the crate's JsonSchema impls and method tables)",
                "normative": True,
                "upstream": "agentclientprotocol/agent-client-protocol",
                "crate_version": version,
                "note": "`make spec-refresh`; the exporter reproduces the npm SDK 2.4.0 bundle from crate 1.15.1 exactly",
            }
        )
    pins_path.write_text(json.dumps(pins, indent=2, ensure_ascii=False) + "\n")


def model_dumps() -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text()) for p in sorted((ROOT / "codegen/model").glob("acp-*.json"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", help=f"the {CRATE} release to move to (default: the newest)")
    parser.add_argument("--verify", action="store_true", help="only check that the exporter reproduces the pins")
    args = parser.parse_args()
    scratch = TARGET / "out"
    problems = verify(scratch / "pinned")
    if args.verify or problems:
        print("\n".join(problems) if problems else f"the exporter reproduces every pinned ACP file ({pinned_crate_version()})")
        return 1 if problems else 0
    version = args.version or newest_crate()
    for name, found in sdk_versions().items():
        print(f"{name}: {found}")
    print(f"{CRATE}: moving from {pinned_crate_version()} to {version}")
    set_crate_version(version)
    before = model_dumps()
    install(export(scratch / version), version)
    subprocess.run([sys.executable, "-m", "agentproto_codegen"], check=True, cwd=ROOT / "codegen")
    from .model_diff import report

    print(report(before, model_dumps()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
