"""What changed between two sets of model dumps (`codegen/model/*.json`, format in
`codegen/MODEL.md`), as a readable report: declarations, struct fields, union variants, enum
values and methods added, removed or changed, and stability moves. `make spec-refresh`
prints it; `python3 -m agentproto_codegen.model_diff OLD_DIR NEW_DIR` compares two folders."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

Model = dict[str, Any]


def report(before: dict[str, Model], after: dict[str, Model]) -> str:
    """The report for every dump present on either side, keyed by file name."""
    lines: list[str] = []
    for name in sorted(before.keys() | after.keys()):
        if name not in before:
            lines.append(f"## {name}: new model")
            continue
        if name not in after:
            lines.append(f"## {name}: model removed")
            continue
        changes = model_changes(before[name], after[name])
        lines.append(f"## {name}: " + (f"{len(changes)} change(s)" if changes else "no change"))
        lines.extend(f"- {c}" for c in changes)
    return "\n".join(lines)


def model_changes(old: Model, new: Model) -> list[str]:
    out: list[str] = []
    out += keyed_changes("method", index(old["methods"], "wire"), index(new["methods"], "wire"), method_changes)
    out += keyed_changes("type", old["decls"], new["decls"], decl_changes)
    return out


def index(items: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    return {item[key]: item for item in items}


def keyed_changes(what: str, old: dict[str, Any], new: dict[str, Any], inner: Any) -> list[str]:
    out = [f"{what} `{k}` added ({stability(new[k])})" for k in new if k not in old]
    out += [f"{what} `{k}` removed (was {stability(old[k])})" for k in old if k not in new]
    for k in old.keys() & new.keys():
        out += inner(k, old[k], new[k])
    return sorted(out, key=lambda line: (line.split("`")[1] if "`" in line else line, line))


def stability(item: dict[str, Any]) -> str:
    return str(item.get("stability", "?"))


def moved(where: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    if stability(old) != stability(new):
        return [f"{where}: {stability(old)} → {stability(new)}"]
    return []


def method_changes(wire: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    out = moved(f"method `{wire}`", old, new)
    for key in ("kind", "side", "params", "result"):
        if old.get(key) != new.get(key):
            out.append(f"method `{wire}`: {key} {old.get(key)!r} → {new.get(key)!r}")
    return out


def type_text(t: Any) -> str:
    return json.dumps(t, sort_keys=True)


def decl_changes(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    where = f"type `{name}`"
    out = moved(where, old, new)
    if old["decl"] != new["decl"]:
        return [*out, f"{where}: {old['decl']} → {new['decl']}"]
    if old["decl"] == "struct":
        fields_old, fields_new = index(old["fields"], "wire"), index(new["fields"], "wire")
        for f in fields_new.keys() - fields_old.keys():
            req = "required" if fields_new[f]["required"] else "optional"
            out.append(f"{where}: field `{f}` added ({req}, {stability(fields_new[f])})")
        for f in fields_old.keys() - fields_new.keys():
            out.append(f"{where}: field `{f}` removed")
        for f in fields_old.keys() & fields_new.keys():
            a, b = fields_old[f], fields_new[f]
            out += moved(f"{where}: field `{f}`", a, b)
            if type_text(a["type"]) != type_text(b["type"]):
                out.append(f"{where}: field `{f}` type {type_text(a['type'])} → {type_text(b['type'])}")
            if a["required"] != b["required"]:
                out.append(f"{where}: field `{f}` " + ("now required" if b["required"] else "now optional"))
    elif old["decl"] == "union":
        vold, vnew = index(old["variants"], "name"), index(new["variants"], "name")
        out += [f"{where}: variant `{v}` added ({stability(vnew[v])})" for v in vnew.keys() - vold.keys()]
        out += [f"{where}: variant `{v}` removed" for v in vold.keys() - vnew.keys()]
        for v in vold.keys() & vnew.keys():
            out += moved(f"{where}: variant `{v}`", vold[v], vnew[v])
    elif old["decl"] == "enum":
        out += [f"{where}: value `{v}` added" for v in new["values"] if v not in old["values"]]
        out += [f"{where}: value `{v}` removed" for v in old["values"] if v not in new["values"]]
    elif old["decl"] == "alias" and type_text(old["target"]) != type_text(new["target"]):
        out.append(f"{where}: alias of {type_text(old['target'])} → {type_text(new['target'])}")
    return out


def main() -> int:
    old_dir, new_dir = (Path(a) for a in sys.argv[1:3])
    load = lambda d: {p.name: json.loads(p.read_text()) for p in sorted(d.glob("*.json"))}  # noqa: E731
    print(report(load(old_dir), load(new_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
