"""What the Python modules of one ACP version family share: a top-level definition a
surface would write exactly as one of its bases writes it is imported from that base.

Python classes are nominal and carry their docs, so sharing is decided on the emitted
text, after each surface's modules are written in full: a definition (a class, a
function, a constant) is taken from a base module when

* the base module defines the same name with the same text, and
* every other top-level definition it refers to is taken from that same base as well
  (greatest fixed point, so cycles are fine), so that the names it reads resolve to the
  same objects in both modules; a decoder's `t.<Type>` must name a type that the
  types module takes from that base too.

The result is what `sharing.py` finds on the model (most of v1 unstable is v1, most of
v2 unstable is v2), without the Python emitters having to know about it: a type whose
doc differs between two surfaces stays in each, as do its decoders. A definition taken
from a base is imported from it where the module still needs the name: for its own
definitions, its export list (`__all__`, which makes it a re-export) or its decoder table. Imports and formatting are then left to ruff, as `make python-lint`
checks them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# Per-surface names: the method table, rules and the module's own plumbing.
NEVER = frozenset({"__all__", "SURFACE", "METHODS", "RULES", "DECODERS", "PROTOCOL_VERSION"})


@dataclass
class Definition:
    name: str
    text: str  # the statement and the docstring that follows it, as written
    first: int  # first line (1-based)
    last: int  # last line
    names: set[str]  # the names it reads
    types: set[str]  # `t.<Type>` it reads (decode modules)


@dataclass
class Module:
    path: str  # the module's dotted path
    text: str
    defs: dict[str, Definition]


def parse(path: str, text: str) -> Module:
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    defs: dict[str, Definition] = {}
    body = tree.body
    for i, node in enumerate(body):
        name = _defined(node)
        if name is None or name in NEVER:
            continue
        last = node.end_lineno or node.lineno
        following = body[i + 1] if i + 1 < len(body) else None
        if _is_docstring(following):
            assert following is not None
            last = following.end_lineno or following.lineno
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        names: set[str] = set()
        types: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                names.add(sub.id)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "t":
                types.add(sub.attr)
        names.discard(name)
        defs[name] = Definition(name, "".join(lines[first - 1 : last]), first, last, names, types)
    return Module(path, text, defs)


def _defined(node: ast.stmt) -> str | None:
    if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
        return node.name
    if isinstance(node, ast.If):
        # `if TYPE_CHECKING: X: TypeAlias = ... else: X = ...`: one name, both branches.
        names = {_defined(n) for n in [*node.body, *node.orelse]}
        return names.pop() if len(names) == 1 and None not in names else None
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _is_docstring(node: ast.stmt | None) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def taken(module: Module, base: Module, available: set[str] | None, types_taken: set[str] | None) -> set[str]:
    """The definitions of `module` it can take from `base`, among `available` (all when
    None); for a decode module, `types_taken` are the types its types module takes from
    the same base."""
    names = {
        n
        for n, d in module.defs.items()
        if (available is None or n in available) and n in base.defs and base.defs[n].text == d.text
    }
    changed = True
    while changed:
        changed = False
        for n in sorted(names):
            d = module.defs[n]
            own_refs = {r for r in d.names if r in module.defs}
            if not own_refs <= names or (types_taken is not None and not d.types <= types_taken):
                names.discard(n)
                changed = True
    return names


def rewrite(module: Module, sources: dict[str, str], roots: set[str]) -> str:
    """`module` without the definitions `sources` maps to the module they come from, each
    imported where a remaining definition or `roots` (names the module must hold) need it."""
    lines = module.text.splitlines(keepends=True)
    drop = set()
    for n in sources:
        d = module.defs[n]
        drop.update(range(d.first, d.last + 1))
    kept = [line for i, line in enumerate(lines, start=1) if i not in drop]
    remaining = [d for n, d in module.defs.items() if n not in sources]
    needed = set(roots)
    for d in remaining:
        needed |= d.names
    tree = ast.parse("".join(kept))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            needed.add(node.id)
    imports = []
    for source in sorted(set(sources.values())):
        names = sorted(n for n, s in sources.items() if s == source and n in needed)
        if names:
            imports.append(f"from {source} import {', '.join(names)}\n")
    # After the module's own imports (the first line that is not an import or the header).
    at = _after_imports(kept)
    return "".join(kept[:at] + imports + kept[at:])


def exported(text: str) -> set[str]:
    """The names a module's `__all__` lists."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value = ast.literal_eval(node.value)
            return set(value)
    return set()


def imported(text: str, module: str) -> set[str]:
    """The names `text` imports from `module`."""
    if not text:
        return set()
    out: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module == module:
            out.update(a.name for a in node.names)
    return out


def type_reads(text: str) -> set[str]:
    """The `t.<Type>` a decode module reads from its types module."""
    return {
        n.attr
        for n in ast.walk(ast.parse(text))
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "t"
    }


def _after_imports(lines: list[str]) -> int:
    last = 0
    for i, line in enumerate(lines):
        if line.startswith(("import ", "from ")):
            last = i + 1
        elif line.startswith(("def ", "class ", "@")) or (line[:1].isalpha() and "=" in line):
            break
    return last


def tidy(text: str, filename: str, python_dir: Path) -> str:
    """Sorted imports, unused ones removed, formatted: what `make python-lint` checks."""
    for args in (["check", "--fix", "--select", "I,F401", "--quiet"], ["format"]):
        proc = subprocess.run(
            [sys.executable, "-m", "ruff", *args, "--stdin-filename", filename, "-"],
            input=text, capture_output=True, text=True, cwd=python_dir, check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"ruff {args[0]} failed on generated {filename}:\n{proc.stderr[:4000]}{proc.stdout[:2000]}")
        text = proc.stdout
    return text


def share(
    types: dict[str, Module],
    decoders: dict[str, Module],
    bases: dict[str, list[str]],
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """For each surface (by key), the definitions its types and decode modules take
    from a base: name -> the dotted path of the base module. `bases` lists each
    surface's bases in order of preference; a base's own module is read as written."""
    type_sources: dict[str, dict[str, str]] = {}
    decode_sources: dict[str, dict[str, str]] = {}
    for key in types:
        type_sources[key], decode_sources[key] = {}, {}
        for base in bases.get(key, []):
            left = set(types[key].defs) - set(type_sources[key])
            from_types = taken(types[key], types[base], left, None)
            # Imported from the module that defines it (a base may have imported it too).
            origin = type_sources.get(base, {})
            type_sources[key].update({n: origin.get(n, types[base].path) for n in from_types})
            if key in decoders and base in decoders:
                left = set(decoders[key].defs) - set(decode_sources[key])
                from_decoders = taken(decoders[key], decoders[base], left, from_types)
                origin = decode_sources.get(base, {})
                decode_sources[key].update({n: origin.get(n, decoders[base].path) for n in from_decoders})
    return type_sources, decode_sources
