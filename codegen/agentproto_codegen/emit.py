"""What every language's emitter shares: a line writer that indents by blocks,
doc comments, and string literals.  Identifier spelling lives in ``names.py``.

Nothing here knows about the model; an emitter (``rust.py``, later Python and
TypeScript) decides what to write and uses these to write it correctly.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

# ---------------------------------------------------------------------------
# Writer


class Writer:
    """A source file built line by line; each line is indented by the blocks it sits in."""

    def __init__(self, unit: str = "    ") -> None:
        self.unit = unit  # one level of indentation
        self.depth = 0
        self._lines: list[str] = []

    @property
    def margin(self) -> str:
        """The indentation of the next line."""
        return self.unit * self.depth

    def line(self, text: str = "") -> None:
        """Appends ``text`` at the current indentation.  An empty line gets no
        indentation (no trailing whitespace); text with newlines becomes several lines."""
        for piece in text.split("\n"):
            self._lines.append(self.margin + piece if piece else "")

    # The first Rust emitter wrote every line fully indented through `w`, and the A2A
    # emitter still does.  At depth 0 that is exactly `line`, so both spellings mix.
    w = line

    def lines(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(text)

    @contextmanager
    def indent(self) -> Iterator[None]:
        """Lines written inside are one level deeper."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    @contextmanager
    def block(self, opener: str, closer: str = "}") -> Iterator[None]:
        """``opener``, the lines written inside one level deeper, then ``closer``.

        The closer is written only when the body finished without an exception, so a
        failed emitter never leaves a plausible-looking file behind."""
        self.line(opener)
        with self.indent():
            yield
        self.line(closer)

    def doc(self, doc: str, style: DocStyle, width: int | None = None) -> None:
        """The first paragraph of ``doc`` as a doc comment at the current indentation;
        ``width`` (if given) counts the indentation too."""
        self.lines(doc_comment(doc, style, width, indent=len(self.margin)))

    def text(self) -> str:
        """The whole file, ending with one newline."""
        return "\n".join(self._lines) + "\n"


# ---------------------------------------------------------------------------
# Doc comments


class DocStyle(enum.Enum):
    RUST = "///"  # outer doc comment of the item that follows
    RUST_INNER = "//!"  # doc comment of the enclosing module
    HASH = "#"  # a plain Python comment
    DOCSTRING = '"""'  # a Python docstring
    JSDOC = "/**"  # a TypeScript / JavaScript JSDoc block


_FENCE = re.compile(r"\s*(```|~~~)")
# Lines that Markdown reads as something other than running text: list items, tables,
# headings (also setext underlines), quotes, rules, link definitions, HTML.  Joining
# them with their neighbours would change what they render as: never re-flowed.
_STRUCTURAL = re.compile(r"([-+*]|\d+[.)])(\s|$)|[|#>]|\[[^\]]+\]:|<|(=+|-+|\*+|_+)\s*$")


def first_paragraph(doc: str) -> list[str]:
    """The lines of the first paragraph of a description: trailing blanks removed, tabs
    as spaces.  A blank line inside a code fence does not end the paragraph, so a
    fence is never cut open."""
    kept: list[str] = []
    fenced = False
    for raw in doc.strip().split("\n"):
        if raw == "" and not fenced:
            break
        if _FENCE.match(raw):
            fenced = not fenced
        kept.append(raw)
    # splitlines, not split: a stray "\r" or U+2028 must not end up inside a comment line.
    return [line.rstrip().replace("\t", " ") for line in "\n".join(kept).splitlines()]


def reflow(lines: list[str], width: int) -> list[str]:
    """Runs of plain text re-wrapped to ``width`` columns; Markdown structure (code
    fences and their contents, list items, tables, indented lines, hard line breaks)
    kept line for line.  Words are never split, so a long URL may overflow."""
    out: list[str] = []
    run: list[str] = []
    fenced = False

    def flush() -> None:
        if run:
            out.extend(_fill(" ".join(run).split(), width))
            run.clear()

    for line in lines:
        fence = bool(_FENCE.match(line))
        if fenced or fence or not line or line[0].isspace() or _STRUCTURAL.match(line):
            flush()
            out.append(line)
            fenced = fenced != fence
        elif line.endswith("\\"):  # a Markdown hard break ends the run here
            run.append(line)
            flush()
        else:
            run.append(line)
    flush()
    return out


def _fill(words: list[str], width: int) -> list[str]:
    """Greedy fill.  A word that would make its line start a list item, heading,
    quote or table row stays on the previous line, even past ``width``."""
    lines: list[str] = []
    current = ""
    for word in words:
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width or _opens_block(word):
            current += " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def _opens_block(word: str) -> bool:
    return bool(_STRUCTURAL.match(word + " ") or _FENCE.match(word))


def doc_comment(doc: str, style: DocStyle, width: int | None = None, indent: int = 0) -> list[str]:
    """The first paragraph of ``doc`` as comment lines in ``style`` (without indentation).

    ``width=None`` keeps the description's own line breaks; otherwise running text is
    re-flowed so that ``indent`` + comment marker + text fits in ``width`` columns
    where words allow."""
    body = first_paragraph(doc)
    if not body:
        return []
    if width is not None:
        # Room left after the indentation and the marker ("/// ", " * ", ...).
        marker = {DocStyle.DOCSTRING: 3, DocStyle.JSDOC: 3, DocStyle.HASH: 2}.get(style, 4)
        body = reflow(body, max(width - indent - marker, 20))
    if style in (DocStyle.RUST, DocStyle.RUST_INNER, DocStyle.HASH):
        return [f"{style.value} {line}".rstrip() for line in body]
    if style is DocStyle.DOCSTRING:
        return _docstring(body, width, indent)
    return _jsdoc(body, width, indent)


def _docstring(body: list[str], width: int | None, indent: int) -> list[str]:
    # Backslashes would start escapes; three quotes in a row would end the string, and
    # so would quotes just before the closing ones on the same line.
    def escape(line: str, pattern: str) -> str:
        return re.sub(pattern, lambda m: '\\"' * len(m.group()), line.replace("\\", "\\\\"))

    if len(body) == 1:
        one = escape(body[0], r'"{3,}|"+$')
        if width is None or indent + len(one) + 6 <= width:
            return [f'"""{one}"""']
    text = [escape(line, r'"{3,}') for line in body]
    return [f'"""{text[0]}', *text[1:], '"""']


def _jsdoc(body: list[str], width: int | None, indent: int) -> list[str]:
    text = [line.replace("*/", "*\\/") for line in body]  # `*/` would end the comment
    if len(text) == 1 and (width is None or indent + len(text[0]) + 7 <= width):
        return [f"/** {text[0]} */"]
    return ["/**", *(f" * {line}".rstrip() for line in text), " */"]


# ---------------------------------------------------------------------------
# String literals
#
# Every language keeps printable characters as they are (the files are UTF-8) and
# escapes the rest: control characters, format characters such as U+200B or the
# bidirectional overrides, separators other than the space, unassigned code points.


def _literal(s: str, named: dict[str, str], escape: Callable[[int], str]) -> str:
    out = []
    for ch in s:
        if ch in named:
            out.append(named[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(escape(ord(ch)))
    return '"' + "".join(out) + '"'


_COMMON = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _rust_escape(cp: int) -> str:
    if 0xD800 <= cp <= 0xDFFF:
        raise ValueError(f"a lone surrogate (U+{cp:04X}) cannot be in a Rust string")
    return f"\\u{{{cp:x}}}"  # Rust has no \uXXXX (what json.dumps writes)


def rust_str(s: str) -> str:
    """A Rust string literal: ``"caf\u00e9"`` is written ``"café"``, U+0007 ``"\\u{7}"``."""
    return _literal(s, {**_COMMON, "\0": "\\0"}, _rust_escape)


def _python_escape(cp: int) -> str:
    if cp < 0x100:
        return f"\\x{cp:02x}"
    return f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}"


def python_str(s: str) -> str:
    """A Python string literal in double quotes (the formatters' choice)."""
    return _literal(s, _COMMON, _python_escape)


def _ts_escape(cp: int) -> str:
    if cp < 0x100:
        return f"\\x{cp:02x}"  # not `\0`: before a digit it is a legacy octal escape
    return f"\\u{cp:04x}" if cp < 0x10000 else f"\\u{{{cp:x}}}"


def ts_str(s: str) -> str:
    """A TypeScript / JavaScript string literal in double quotes.  U+2028 and U+2029
    are escaped (older engines end the line there)."""
    return _literal(s, _COMMON, _ts_escape)


QUOTE: dict[str, Callable[[str], str]] = {"rust": rust_str, "python": python_str, "typescript": ts_str}


# ---------------------------------------------------------------------------

T = TypeVar("T")


def given(value: T | None, what: str) -> T:
    """``value``, or a loud failure naming what is missing (rather than writing a
    ``null`` or ``None`` into generated code)."""
    if value is None:
        raise ValueError(f"{what} is missing")
    return value


def table_header(source: tuple[str, str], comment: str) -> list[str]:
    """The two header lines of a file generated from one table file: `source` is (file,
    sha256); `comment` the language's line comment (`//`, `#`)."""
    return [
        f"{comment} @generated by `make codegen` from {source[0]}",
        f"{comment} sha256 {source[1]}. Do not edit: change codegen/ and regenerate.",
    ]
