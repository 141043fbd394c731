"""Nodes, NodeLists and the traversals over them: views holding a file and an index, every
field read from the buffer when asked for."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from agentproto.sync.ast import kind
from agentproto.sync.ast.source_file import (
    DATA,
    DATA_INDEX_MASK,
    DATA_TYPE_EXTENDED,
    DATA_TYPE_MASK,
    DATA_TYPE_STRING,
    END,
    FLAGS,
    KIND,
    KIND_NODE_LIST,
    NEXT,
    PARENT,
    POS,
    WORDS,
    SourceFile,
)

__all__ = ["Node", "NodeList"]

T = TypeVar("T")


def _signed(value: int) -> int:
    return value - (1 << 32) if value & 0x8000_0000 else value


def _first_raw_child(file: SourceFile, index: int) -> int:
    """The first child record of `index`, or 0."""
    candidate = index + 1
    if candidate < file.record_count and file.words[candidate * WORDS + PARENT] == index:
        return candidate
    return 0


def _first_visible(file: SourceFile, raw: int) -> int:
    """The first node `forEachChild` visits at or after the record `raw` in its sibling
    chain (0: none): lists are entered, direct JSDoc children skipped."""
    words = file.words
    while raw != 0:
        at = raw * WORDS
        raw_kind = words[at + KIND]
        if raw_kind == KIND_NODE_LIST:
            # Elements are never lists and never skipped (the official walk visits every
            # element); the first one is the record after the list.
            if words[at + DATA] > 0:
                return raw + 1
        elif raw_kind != file.jsdoc or words[words[at + PARENT] * WORDS + KIND] == KIND_NODE_LIST:
            return raw
        raw = words[at + NEXT]
    return 0


def _next_visible(file: SourceFile, index: int) -> int:
    """The node visited after `index` among its logical siblings (0: none)."""
    words = file.words
    following = words[index * WORDS + NEXT]
    if following != 0:
        return _first_visible(file, following)
    parent = words[index * WORDS + PARENT]
    if words[parent * WORDS + KIND] == KIND_NODE_LIST:
        # The last element of a list: go on after the list.
        return _first_visible(file, words[parent * WORDS + NEXT])
    return 0


class Node:
    """A node of a `SourceFile` (not nil, not a NodeList)."""

    __slots__ = ("file", "index")

    def __init__(self, file: SourceFile, index: int) -> None:
        self.file = file
        self.index = index
        """The node's index in the file (stable: the server's node handles use it)."""

    def __repr__(self) -> str:
        return f"Node(index={self.index}, kind={self.kind}, pos={self.pos}, end={self.end})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and other.file is self.file and other.index == self.index

    def __hash__(self) -> int:
        return hash((id(self.file), self.index))

    @property
    def kind(self) -> int:
        """The `SyntaxKind` value (see `agentproto.sync.ast.kind` for the few named there)."""
        return self.file.words[self.index * WORDS + KIND]

    @property
    def pos(self) -> int:
        """Start of the node, leading trivia included (UTF-16 code units in the text)."""
        return _signed(self.file.words[self.index * WORDS + POS])

    @property
    def end(self) -> int:
        """End of the node."""
        return _signed(self.file.words[self.index * WORDS + END])

    @property
    def data(self) -> int:
        """The raw `data` word (child mask, string index or extended-data offset, with tag bits)."""
        return self.file.words[self.index * WORDS + DATA]

    @property
    def flags(self) -> int:
        """The node flags word."""
        return self.file.words[self.index * WORDS + FLAGS]

    @property
    def child_mask(self) -> int | None:
        """Which of the kind's child properties are present, one bit each in the order of
        the kind's property table, when `data` holds a child mask."""
        data = self.data
        return data & 0xFF if data & DATA_TYPE_MASK == 0 else None

    @property
    def parent(self) -> Node | None:
        """The logical parent (NodeLists skipped: elements take their list's parent);
        `None` for the root."""
        words = self.file.words
        parent = words[self.index * WORDS + PARENT]
        if parent != 0 and words[parent * WORDS + KIND] == KIND_NODE_LIST:
            parent = words[parent * WORDS + PARENT]
        return Node(self.file, parent) if parent != 0 else None

    @property
    def has_children(self) -> bool:
        """Whether the node has any child record (a node, a NodeList, or a JSDoc)."""
        return _first_raw_child(self.file, self.index) != 0

    @property
    def text(self) -> memoryview | None:
        """The node's text for the kinds that carry one: identifiers and other string-data
        nodes, literals, template parts, the source file (WTF-8 bytes, a view)."""
        data = self.data
        tag = data & DATA_TYPE_MASK
        if tag == DATA_TYPE_STRING:
            return self.file.string(data & DATA_INDEX_MASK)
        if tag == DATA_TYPE_EXTENDED and self._text_in_extended_data():
            index = self.file.extended_word(data & DATA_INDEX_MASK)
            return None if index is None else self.file.string(index)
        return None

    def _text_in_extended_data(self) -> bool:
        node_kind = self.kind
        return node_kind in kind.LITERALS_WITH_TEXT_IN_EXTENDED_DATA or node_kind == self.file.kinds.source_file

    @property
    def extended_offset(self) -> int | None:
        """The offset of the node's extended record, when `data` points at one."""
        data = self.data
        return data & DATA_INDEX_MASK if data & DATA_TYPE_MASK == DATA_TYPE_EXTENDED else None

    def raw_children(self) -> Iterator[Node | NodeList]:
        """The child records in order, NodeLists and JSDoc nodes included."""
        return _raw_chain(self.file, _first_raw_child(self.file, self.index))

    def children(self) -> Iterator[Node]:
        """The children as `forEachChild` visits them: NodeLists flattened into their
        elements, JSDoc nodes skipped (a JSDoc that is a list element is visited)."""
        file = self.file
        index = _first_visible(file, _first_raw_child(file, self.index))
        while index != 0:
            following = _next_visible(file, index)
            yield Node(file, index)
            index = following

    def for_each_child(self, visit: Callable[[Node], T | None]) -> T | None:
        """Calls `visit` on each child in `forEachChild` order until it returns something
        other than `None`, and returns that (`None` if it never did)."""
        for child in self.children():
            outcome = visit(child)
            if outcome is not None:
                return outcome
        return None

    def descendants(self) -> Iterator[Node]:
        """Every node below this one in the order a recursive `forEachChild` walk visits
        them (preorder). Needs no stack: it climbs parent links."""
        file = self.file
        words = file.words
        root = self.index
        index = _first_visible(file, _first_raw_child(file, root))
        while index != 0:
            successor = _first_visible(file, _first_raw_child(file, index))
            climbing = index
            while successor == 0:
                successor = _next_visible(file, climbing)
                if successor != 0:
                    break
                # Up to the logical parent; stop at the root of the walk.
                parent = words[climbing * WORDS + PARENT]
                if words[parent * WORDS + KIND] == KIND_NODE_LIST:
                    parent = words[parent * WORDS + PARENT]
                if parent == root or parent == 0:
                    break
                climbing = parent
            yield Node(file, index)
            index = successor


class NodeList:
    """A NodeList record of a `SourceFile`."""

    __slots__ = ("file", "index")

    def __init__(self, file: SourceFile, index: int) -> None:
        self.file = file
        self.index = index

    def __repr__(self) -> str:
        return f"NodeList(index={self.index}, len={len(self)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NodeList) and other.file is self.file and other.index == self.index

    def __hash__(self) -> int:
        return hash((id(self.file), self.index, "list"))

    def __len__(self) -> int:
        """The element count the record states."""
        return self.file.words[self.index * WORDS + DATA]

    @property
    def pos(self) -> int:
        return _signed(self.file.words[self.index * WORDS + POS])

    @property
    def end(self) -> int:
        return _signed(self.file.words[self.index * WORDS + END])

    def __iter__(self) -> Iterator[Node | NodeList]:
        """The elements, following their sibling links."""
        return _raw_chain(self.file, self.index + 1 if len(self) else 0)


def _raw_chain(file: SourceFile, index: int) -> Iterator[Node | NodeList]:
    words = file.words
    while index != 0:
        following = words[index * WORDS + NEXT]
        yield NodeList(file, index) if words[index * WORDS + KIND] == KIND_NODE_LIST else Node(file, index)
        index = following
