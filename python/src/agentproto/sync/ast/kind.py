"""The `SyntaxKind` values this reader needs, from TypeScript 7.0.2's
`dist/enums/syntaxKind.js` (the numbering changes between builds; the Rust reader's
`ast::kind` holds the same)."""

from __future__ import annotations

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
INTERFACE_DECLARATION = 265
SOURCE_FILE = 307
JSDOC = 315
"""`SyntaxKind.JSDoc`: skipped by `forEachChild`-style traversal (unless a list element)."""

TEXT_IN_EXTENDED_DATA = frozenset(
    {
        NUMERIC_LITERAL,
        BIG_INT_LITERAL,
        STRING_LITERAL,
        REGULAR_EXPRESSION_LITERAL,
        NO_SUBSTITUTION_TEMPLATE_LITERAL,
        TEMPLATE_HEAD,
        TEMPLATE_MIDDLE,
        TEMPLATE_TAIL,
        SOURCE_FILE,
    }
)
"""Kinds whose extended record starts with the string index of their text."""
