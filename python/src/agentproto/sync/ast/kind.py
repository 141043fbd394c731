"""The `SyntaxKind` values this reader needs.

The ones here are numbered alike by both servers (all below 167, from
`dist/enums/syntaxKind.js` of npm `typescript@7.0.2` and `typescript@7.1.0-beta`). 7.1
inserted `SourceKeyword` at 167, so every kind from there up is one higher: those this
reader needs are in `Kinds`, per binary format (`agentproto.sync.ast.FORMAT_V5`,
`FORMAT_V9`, `SourceFile.kinds`). The Rust reader's `ast::kind` and `ast::Kinds` hold
the same.
"""

from __future__ import annotations

from dataclasses import dataclass

END_OF_FILE_TOKEN = 1
NUMERIC_LITERAL = 8
BIG_INT_LITERAL = 9
STRING_LITERAL = 10
REGULAR_EXPRESSION_LITERAL = 13
NO_SUBSTITUTION_TEMPLATE_LITERAL = 14
TEMPLATE_HEAD = 15
TEMPLATE_MIDDLE = 16
TEMPLATE_TAIL = 17
IDENTIFIER = 79

LITERALS_WITH_TEXT_IN_EXTENDED_DATA = frozenset(
    {
        NUMERIC_LITERAL,
        BIG_INT_LITERAL,
        STRING_LITERAL,
        REGULAR_EXPRESSION_LITERAL,
        NO_SUBSTITUTION_TEMPLATE_LITERAL,
        TEMPLATE_HEAD,
        TEMPLATE_MIDDLE,
        TEMPLATE_TAIL,
    }
)
"""Kinds whose extended record starts with the string index of their text (the source
file's does too: `Kinds.source_file`)."""


@dataclass(frozen=True, slots=True)
class Kinds:
    """The kinds whose number depends on the binary format."""

    interface_declaration: int
    source_file: int
    jsdoc: int
    """`SyntaxKind.JSDoc`: skipped by `forEachChild`-style traversal (unless a list element)."""
