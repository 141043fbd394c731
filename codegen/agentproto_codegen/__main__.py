"""`python3 -m agentproto_codegen [--check] [--dump-model DIR]` (run from codegen/).

Verifies every pinned spec file against spec/PINNED.json, reads the specs and the
rules files into one model per protocol version, and writes the generated sources and
the model dumps (codegen/model/).  With --check nothing is written; the run fails if
any generated file differs from what is committed.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import subprocess
import sys
from pathlib import Path

from . import a2a_demo, a2a_errors, store_schema, a2a_v03, python_a2a, python_a2a_proto, python_a2a_v03, rust_a2a_v03, typescript_a2a_v03, acp, decode_kinds, error_codes, python_share, local_errors, proto, sharing, typescript_share, python, python_decode, rules, rust, rust_a2a, rust_a2a_proto, typescript, typescript_a2a, typescript_codec
from .model import Spec

ROOT = Path(__file__).resolve().parents[2]

# (the schema the surface is, version, surface, the stability labels it keeps, output).
# Rust keeps one module per surface (see ARCHITECTURE.md); each is cut out of its
# version's one model by stability.
ACP_SURFACES = [
    ("acp/v1/schema.json", "v1", "stable", {"stable"}, "crates/acp/src/generated/v1.rs"),
    ("acp/v1/schema.unstable.json", "v1", "unstable", {"stable", "unstable"}, "crates/acp/src/generated/v1_unstable.rs"),
    ("acp/v2/schema.json", "v2", "stable", {"draft"}, "crates/acp/src/generated/v2.rs"),
    ("acp/v2/schema.unstable.json", "v2", "unstable", {"draft", "unstable"}, "crates/acp/src/generated/v2_unstable.rs"),
]

# The Python SDK's generated modules: one types module and one slow-path decoder module
# per ACP surface (the same cut as Rust's), plus the package's __init__.
PYTHON_DIR = "python/src/agentproto/acp/generated"
# Each surface's public module (`agentproto.acp.v1`, ...) is generated too: it differs
# from the others only by names and rules.
PYTHON_PUBLIC_DIR = "python/src/agentproto/acp"

# The TypeScript SDK's generated modules: types and method table, validators and encoders
# per ACP surface; and each surface's public entry point (`agentproto/acp/<surface>`).
TS_DIR = "ts/src/generated/acp"
TS_PUBLIC_DIR = "ts/src/acp"

# The model dumps: the documented input of every emitter (codegen/MODEL.md), committed
# and checked like generated code, so a change to the model shows in review.
MODEL_DIR = "codegen/model"

# (proto file, output)
A2A_SURFACES = [
    ("a2a/v1.0/a2a.proto", "crates/a2a/src/generated/v1.rs"),
]


def verify_pins() -> dict[str, str]:
    """Checks every file listed in spec/PINNED.json; returns file -> sha256."""
    pinned = json.loads((ROOT / "spec/PINNED.json").read_text())
    hashes: dict[str, str] = {}
    bad = []
    listed = set()
    for entry in pinned["files"]:
        path = ROOT / "spec" / entry["file"]
        listed.add(entry["file"])
        if not path.is_file():
            bad.append(f"{entry['file']}: missing")
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != entry["sha256"]:
            bad.append(f"{entry['file']}: sha256 {digest} != pinned {entry['sha256']}")
        hashes[entry["file"]] = digest
    on_disk = {p.relative_to(ROOT / "spec").as_posix() for p in (ROOT / "spec").rglob("*") if p.is_file()}
    for extra in sorted(on_disk - listed - {"PINNED.json"}):
        bad.append(f"{extra}: present under spec/ but not listed in PINNED.json")
    if bad:
        raise SystemExit("pinned spec check failed:\n  " + "\n  ".join(bad))
    return hashes


def build_models(hashes: dict[str, str]) -> dict[str, Spec]:
    """Every protocol version as one model, rules included: what every emitter reads
    and what `--dump-model` writes (codegen/MODEL.md)."""
    models: dict[str, Spec] = {}
    for version in ("v1", "v2"):
        full = acp.read_version(str(ROOT / "spec"), version, hashes)
        rules.apply_acp(full, ROOT / "rules/acp.toml", ROOT / "spec" / f"acp/{version}/schema.unstable.json")
        models[f"acp-{version}"] = full
    for source, _ in A2A_SURFACES:
        a2a_rules, rules_source = rules.load(ROOT / "rules/a2a.toml")
        spec = proto.read_proto(str(ROOT / "spec" / source), source, hashes[source], a2a_rules)
        spec.sources.append(rules_source)
        models["a2a-v1"] = spec
    return models


LANGUAGES = ("rust", "python", "typescript")


def generate(hashes: dict[str, str], only: tuple[str, ...] = LANGUAGES) -> dict[str, str]:
    """Every generated file by its path, for the languages in `only` (and the model dumps)."""
    outputs = {}
    models = build_models(hashes)
    specs = {
        (version, surface): models[f"acp-{version}"].narrow(keep, surface, schema, hashes[schema])
        for schema, version, surface, keep, _ in ACP_SURFACES
    }
    rust_shared = rust_sharing(specs)
    ts_plans = typescript_share.plans(specs)
    for schema, version, surface, keep, out in ACP_SURFACES:
        spec = specs[(version, surface)]
        if "rust" in only:
            outputs[out] = rustfmt(rust.emit(spec, rust_shared[(version, surface)]))
        if "python" in only:
            emit_python(spec, outputs)
        if "typescript" in only:
            emit_typescript(spec, outputs, ts_plans[(version, surface)])
    if "python" in only:
        python_sharing(specs, outputs)
        outputs[f"{PYTHON_DIR}/__init__.py"] = python.package_init()
        a2a_model = json.loads(models["a2a-v1"].to_json())
        outputs.update(python_a2a.emit(a2a_model, a2a_errors.read(ROOT), ROOT / "python"))
        proto_tables = python_a2a_proto.emit(a2a_model, python_a2a.header(a2a_model))
        outputs[python_a2a_proto.OUT] = python_share.tidy(proto_tables, python_a2a_proto.OUT, ROOT / "python")
        v03_tables = python_a2a_v03.python(a2a_v03.read_with(ROOT, a2a_model))
        outputs[python_a2a_v03.OUT] = python_share.tidy(v03_tables, python_a2a_v03.OUT, ROOT / "python")
    if "rust" in only:
        for source, out in A2A_SURFACES:
            outputs[out] = rustfmt(rust_a2a.emit(models["a2a-v1"]))
        outputs[rust_a2a_proto.RUST_OUT] = rustfmt(rust_a2a_proto.emit(models["a2a-v1"]))
        outputs[a2a_errors.RUST_OUT] = rustfmt(a2a_errors.rust(a2a_errors.read(ROOT)))
        v1_model = json.loads(models["a2a-v1"].to_json())
        outputs[rust_a2a_v03.RUST_OUT] = rustfmt(rust_a2a_v03.rust(a2a_v03.read_with(ROOT, v1_model)))
    if "typescript" in only:
        outputs.update(typescript_a2a.emit(models["a2a-v1"], a2a_errors.read(ROOT)))
        v1_tables = a2a_v03.read_with(ROOT, json.loads(models["a2a-v1"].to_json()))
        outputs[typescript_a2a_v03.TS_OUT] = typescript_a2a_v03.typescript(v1_tables)
    acp_rules, acp_rules_source = rules.load(ROOT / "rules/acp.toml")
    codes = error_codes.read(ROOT, acp_rules)
    kinds, kinds_source = local_errors.read(acp_rules, (acp_rules_source["file"], acp_rules_source["sha256"]))
    if "rust" in only:
        outputs[local_errors.RUST_OUT] = rustfmt(local_errors.rust(kinds, kinds_source))
    if "typescript" in only:
        outputs[local_errors.TS_OUT] = local_errors.typescript(kinds, kinds_source)
    if "python" in only:
        outputs[local_errors.PYTHON_OUT] = local_errors.python(kinds, kinds_source)
    if "rust" in only:
        outputs[error_codes.RUST_OUT] = rustfmt(error_codes.rust(codes))
    if "python" in only:
        outputs[error_codes.PYTHON_OUT] = error_codes.python(codes)
    if "typescript" in only:
        outputs[error_codes.TS_OUT] = error_codes.typescript(codes)
    failure_kinds, failure_source = decode_kinds.read(ROOT / "rules/decode.toml")
    if "rust" in only:
        outputs[decode_kinds.RUST_OUT] = rustfmt(decode_kinds.rust(failure_kinds, failure_source))
    if "python" in only:
        outputs[decode_kinds.PYTHON_OUT] = decode_kinds.python(failure_kinds, failure_source)
    if "typescript" in only:
        outputs[decode_kinds.TS_OUT] = decode_kinds.typescript(failure_kinds, failure_source)
    schema = store_schema.read(ROOT)
    if "rust" in only:
        outputs[store_schema.RUST_OUT] = rustfmt(store_schema.rust(schema))
    if "python" in only:
        outputs[store_schema.PYTHON_OUT] = store_schema.python(schema)
    if "typescript" in only:
        outputs[store_schema.TS_OUT] = store_schema.typescript(schema)
    demo = a2a_demo.read(ROOT)
    if "rust" in only:
        outputs[a2a_demo.RUST_OUT] = rustfmt(a2a_demo.rust(demo))
    if "python" in only:
        outputs[a2a_demo.PYTHON_OUT] = python_share.tidy(a2a_demo.python(demo), a2a_demo.PYTHON_OUT, ROOT / "python")
    if "typescript" in only:
        outputs[a2a_demo.TS_OUT] = a2a_demo.typescript(demo)
    for name, model in models.items():
        outputs[f"{MODEL_DIR}/{name}.json"] = model.to_json()
    return outputs


def rust_sharing(specs: dict[sharing.SurfaceKey, Spec]) -> dict[sharing.SurfaceKey, dict[str, str]]:
    """For each Rust surface module, the declarations another module writes (name -> module).
    A Rust type carries its doc, so a declaration is shared only where its doc is the same too."""
    module = {k: k[0] + ("_unstable" if k[1] == "unstable" else "") for k in specs}
    owners = sharing.owners(specs, sharing.ACP_BASES, docs=True)
    return {k: {name: module[o] for name, o in owned.items() if o != k} for k, owned in owners.items()}


def python_sharing(specs: dict[sharing.SurfaceKey, Spec], outputs: dict[str, str]) -> None:
    """Each surface's types and decode modules import what a base module writes the same
    way (`python_share.py`), rewritten in place in `outputs`."""
    name = {k: python.module_name(spec) for k, spec in specs.items()}
    dotted = "agentproto.acp.generated"
    types = {
        name[k]: python_share.parse(f"{dotted}.{name[k]}", outputs[f"{PYTHON_DIR}/{name[k]}.py"]) for k in specs
    }
    decoders = {
        name[k]: python_share.parse(f"{dotted}._{name[k]}_decode", outputs[f"{PYTHON_DIR}/_{name[k]}_decode.py"])
        for k in specs
    }
    bases = {name[k]: [name[b] for b in sharing.ACP_BASES[k]] for k in specs}
    type_sources, decode_sources = python_share.share(types, decoders, bases)
    python_dir = ROOT / "python"
    for m in types:
        decode_file = f"{PYTHON_DIR}/_{m}_decode.py"
        decode_text = outputs[decode_file]
        if decode_sources[m]:
            decode_text = python_share.rewrite(decoders[m], decode_sources[m], set())
            outputs[decode_file] = python_share.tidy(decode_text, decode_file, python_dir)
        if type_sources[m]:
            roles = outputs.get(f"{PYTHON_DIR}/{m}_roles.py", "")
            roots = python_share.exported(types[m].text) | python_share.imported(roles, types[m].path)
            roots |= python_share.type_reads(outputs[decode_file])
            types_file = f"{PYTHON_DIR}/{m}.py"
            text = python_share.rewrite(types[m], type_sources[m], roots)
            outputs[types_file] = python_share.tidy(text, types_file, python_dir)


def emit_python(spec: Spec, outputs: dict[str, str]) -> None:
    types_module, roles_module = python.emit_modules(spec)
    outputs[f"{PYTHON_DIR}/{python.module_name(spec)}.py"] = types_module
    if roles_module is not None:
        outputs[f"{PYTHON_DIR}/{python.module_name(spec)}_roles.py"] = roles_module
    outputs[f"{PYTHON_DIR}/_{python.module_name(spec)}_decode.py"] = python_decode.emit(spec)
    outputs[f"{PYTHON_PUBLIC_DIR}/{python.module_name(spec)}.py"] = python.public_module(spec)


def emit_typescript(spec: Spec, outputs: dict[str, str], plan: typescript_share.Plan) -> None:
    stem = typescript.module_name(spec)
    outputs[f"{TS_DIR}/{stem}.ts"] = typescript.emit(spec, plan)
    outputs[f"{TS_DIR}/{stem}.codec.ts"] = typescript_codec.emit(spec, plan)
    outputs[f"{TS_DIR}/{stem}.roles.ts"] = typescript.roles_module(spec)
    outputs[f"{TS_PUBLIC_DIR}/{stem}.ts"] = typescript.public_module(spec)
    outputs[f"{TS_PUBLIC_DIR}/{stem}-codec.ts"] = typescript.codec_module(spec)


def rustfmt(text: str) -> str:
    """Formats generated Rust the way `cargo fmt` would (using the repo's rustfmt.toml)."""
    proc = subprocess.run(
        ["rustfmt", "--edition", "2021", "--emit", "stdout", "--config-path", str(ROOT / "rustfmt.toml")],
        input=text, capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"rustfmt failed on generated code:\n{proc.stderr[:4000]}")
    return proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(prog="agentproto_codegen")
    parser.add_argument("--check", action="store_true", help="fail if generated files are stale; write nothing")
    parser.add_argument("--pins-only", action="store_true", help="only verify spec/PINNED.json")
    parser.add_argument("--dump-model", metavar="DIR", help=f"also write the model dumps (as in {MODEL_DIR}/) to DIR")
    parser.add_argument("--only", choices=LANGUAGES, action="append", help="regenerate only this language's files (repeatable)")
    args = parser.parse_args()

    hashes = verify_pins()
    print(f"pins: {len(hashes)} files verified")
    if args.pins_only:
        return 0
    outputs = generate(hashes, tuple(args.only) if args.only else LANGUAGES)
    if args.dump_model:
        d = Path(args.dump_model)
        d.mkdir(parents=True, exist_ok=True)
        for rel, text in outputs.items():
            if rel.startswith(MODEL_DIR + "/"):
                (d / Path(rel).name).write_text(text)
    stale = []
    for rel, text in outputs.items():
        path = ROOT / rel
        current = path.read_text() if path.exists() else ""
        if current == text:
            continue
        if args.check:
            diff = difflib.unified_diff(current.splitlines(), text.splitlines(), rel, rel + " (regenerated)", lineterm="", n=1)
            stale.append("\n".join(list(diff)[:40]))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {rel}")
    if stale:
        print("generated files are stale; run `make codegen`:\n" + "\n".join(stale), file=sys.stderr)
        return 1
    print("codegen: up to date" if args.check else "codegen: done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
