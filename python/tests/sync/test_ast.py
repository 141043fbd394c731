"""The source-file reader on buffers built here in the version-5 layout: header fields,
`forEachChild` order, the preorder walk, and every link check."""

from __future__ import annotations

import struct

import pytest

from agentproto.sync.ast import (
    HEADER_SIZE,
    KIND_NODE_LIST,
    PROTOCOL_VERSION,
    AstError,
    Node,
    NodeList,
    SourceFile,
    kind,
)

Record = tuple[int, int, int, int, int, int]
"""kind, pos, end, next, parent, data (flags are 0)."""

STRING = 0x4000_0000
EXTENDED = 0x8000_0000
TEXT = "interface Point {}"


def build(version: int, strings: list[str], extended: list[int], records: list[Record]) -> bytes:
    offsets: list[int] = []
    data = b""
    for text in strings:
        offsets.append(len(data))
        data += text.encode()
        offsets.append(len(data))
    string_offsets = HEADER_SIZE
    string_data = string_offsets + 4 * len(offsets)
    extended_data = string_data + len(data)
    nodes = extended_data + 4 * len(extended)
    header = [version << 24, 0x1111, 0x2222, 0x3333, 0x4444, 7, string_offsets, string_data, extended_data, nodes]
    header.append(nodes)
    out = struct.pack(f"<{len(header) + len(offsets)}I", *header, *offsets) + data
    out += struct.pack(f"<{len(extended)}I", *extended)
    for record in records:
        out += struct.pack("<7I", *record, 0)
    return out


def sample_records() -> list[Record]:
    """`interface Point {}` with a JSDoc on the interface, a JSDoc as a list element, an
    empty list::

        1 SourceFile
        ├─ 2 NodeList(2)
        │  ├─ 3 InterfaceDeclaration
        │  │  ├─ 4 JSDoc          (skipped: a direct child)
        │  │  └─ 5 Identifier "Point"
        │  └─ 6 JSDoc             (visited: a list element)
        ├─ 7 NodeList(0)
        └─ 8 EndOfFileToken
    """
    return [
        (0, 0, 0, 0, 0, 0),
        (kind.SOURCE_FILE, 0, 18, 0, 0, EXTENDED),
        (KIND_NODE_LIST, 0, 18, 7, 1, 2),
        (kind.INTERFACE_DECLARATION, 0, 18, 6, 2, 0b10),
        (kind.JSDOC, 0, 0, 5, 3, 0),
        (kind.IDENTIFIER, 9, 15, 0, 3, STRING | 2),
        (kind.JSDOC, 18, 18, 0, 2, 0),
        (KIND_NODE_LIST, 18, 18, 8, 1, 0),
        (kind.END_OF_FILE_TOKEN, 18, 18, 0, 1, 0),
    ]


def sample(records: list[Record] | None = None) -> SourceFile:
    return SourceFile(build(PROTOCOL_VERSION, [TEXT, "Point", "/a.ts"], [0, 4, 4], records or sample_records()))


def copy(view: memoryview | None) -> bytes | None:
    return None if view is None else bytes(view)


def node(file: SourceFile, index: int) -> Node:
    found = file.node(index)
    assert found is not None
    return found


def indices(nodes: object) -> list[int]:
    return [item.index for item in nodes]  # type: ignore[attr-defined]


def test_header_fields_are_read() -> None:
    file = sample()
    assert file.record_count == 9
    assert file.parse_options == 7
    assert file.content_hash == (0x4444 << 96) | (0x3333 << 64) | (0x2222 << 32) | 0x1111
    assert copy(file.text) == TEXT.encode()
    assert copy(file.file_name) == b"/a.ts"
    assert copy(file.path) == b"/a.ts"


def test_the_reader_takes_any_buffer_without_copying() -> None:
    data = bytearray(build(PROTOCOL_VERSION, [TEXT, "Point", "/a.ts"], [0, 4, 4], sample_records()))
    file = SourceFile(memoryview(data))
    assert file.bytes.obj is data
    data[HEADER_SIZE + 6 * 4] = ord("P")  # the first byte of the text, changed in place
    assert file.text is not None and bytes(file.text[:1]) == b"P"


def test_children_flatten_lists_and_skip_direct_jsdoc() -> None:
    file = sample()
    assert indices(file.root().children()) == [3, 6, 8]
    assert indices(node(file, 3).children()) == [5]
    assert indices(node(file, 5).children()) == []


def test_descendants_are_the_recursive_walk_in_preorder() -> None:
    file = sample()
    assert indices(file.root().descendants()) == [3, 5, 6, 8]
    assert indices(node(file, 3).descendants()) == [5]

    def walk(parent: Node, out: list[int]) -> None:
        for child in parent.children():
            out.append(child.index)
            walk(child, out)

    recursive: list[int] = []
    walk(file.root(), recursive)
    assert indices(file.root().descendants()) == recursive


def test_raw_children_keep_lists_and_jsdoc() -> None:
    file = sample()
    raw = list(file.root().raw_children())
    assert [type(item) for item in raw] == [NodeList, NodeList, Node]
    statements, empty, end = raw
    assert isinstance(statements, NodeList) and isinstance(empty, NodeList) and isinstance(end, Node)
    assert (statements.index, len(statements), len(empty), end.kind) == (2, 2, 0, kind.END_OF_FILE_TOKEN)
    assert list(empty) == []
    assert indices(statements) == [3, 6]
    assert all(isinstance(element, Node) for element in statements)
    assert len(list(node(file, 3).raw_children())) == 2


def test_parent_skips_lists_and_the_root_has_none() -> None:
    file = sample()
    assert node(file, 3).parent == file.root()
    assert node(file, 5).parent == node(file, 3)
    assert file.root().parent is None
    assert file.node(2) is None, "a list index is not a node"
    assert file.node(0) is None and file.node(9) is None


def test_node_fields_and_text() -> None:
    file = sample()
    identifier = node(file, 5)
    assert (identifier.kind, identifier.pos, identifier.end) == (kind.IDENTIFIER, 9, 15)
    assert copy(identifier.text) == b"Point"
    assert identifier.child_mask is None
    assert node(file, 3).child_mask == 0b10
    assert node(file, 3).text is None
    assert copy(file.root().text) == TEXT.encode()
    assert file.root().has_children and not identifier.has_children


def test_negative_positions_read_as_signed() -> None:
    records = sample_records()
    records[8] = (kind.END_OF_FILE_TOKEN, 0xFFFF_FFFF, 18, 0, 1, 0)
    assert node(sample(records), 8).pos == -1


def test_for_each_child_stops_at_the_first_value() -> None:
    file = sample()
    seen: list[int] = []

    def visit(child: Node) -> int | None:
        seen.append(child.index)
        return child.index if child.kind == kind.JSDOC else None

    assert file.root().for_each_child(visit) == 6
    assert seen == [3, 6]
    assert node(file, 5).for_each_child(visit) is None


def test_out_of_range_strings_are_none() -> None:
    file = sample()
    assert copy(file.string(4)) == b"/a.ts"
    assert file.string(5) is None
    assert file.string(2**32 - 1) is None
    assert file.extended_word(8) == 4 and file.extended_word(9) is None


def refusal(data: bytes) -> AstError:
    with pytest.raises(AstError) as caught:
        SourceFile(data)
    return caught.value


def test_a_short_buffer_and_other_versions_are_refused() -> None:
    assert str(refusal(bytes(43))) == "43 bytes is shorter than the 44-byte header"
    assert str(refusal(build(4, [TEXT], [0], sample_records()))) == "protocol version 4, expected 5"
    assert str(refusal(build(6, [TEXT], [0], sample_records()))) == "protocol version 6, expected 5"


def test_sections_out_of_order_are_refused() -> None:
    data = bytearray(sample().bytes)
    extended = struct.unpack_from("<I", data, 32)[0]
    struct.pack_into("<I", data, 28, extended + 4)  # the strings after the extended data
    assert "not in order" in str(refusal(bytes(data)))
    data = bytearray(sample().bytes)
    struct.pack_into("<I", data, 40, len(data) + 28)
    assert "not in order" in str(refusal(bytes(data)))


def test_a_partial_node_section_is_refused() -> None:
    assert "node section" in str(refusal(bytes(sample().bytes)[:-1]))
    only_nil = build(PROTOCOL_VERSION, [], [], [(0, 0, 0, 0, 0, 0)])
    assert str(refusal(only_nil)) == "node section of 28 bytes is not 2 or more whole 28-byte nodes"


def with_record(index: int, record: Record) -> bytes:
    records = sample_records()
    records[index] = record
    return build(PROTOCOL_VERSION, [TEXT, "Point", "/a.ts"], [0, 4, 4], records)


@pytest.mark.parametrize(
    ("index", "record", "failing"),
    [
        # A node that is its own parent.
        (4, (kind.JSDOC, 0, 0, 5, 4, 0), 4),
        # A parent after the node: its previous sibling's link now leads to another parent.
        (8, (kind.END_OF_FILE_TOKEN, 18, 18, 0, 9, 0), 7),
        # A next sibling that points backwards (would loop).
        (5, (kind.IDENTIFIER, 9, 15, 4, 3, STRING | 2), 5),
        # A next sibling with another parent.
        (3, (kind.INTERFACE_DECLARATION, 0, 18, 8, 2, 0b10), 3),
        # A next sibling past the end.
        (8, (kind.END_OF_FILE_TOKEN, 18, 18, 99, 1, 0), 8),
        # A list claiming elements it does not have.
        (7, (KIND_NODE_LIST, 18, 18, 8, 1, 3), 7),
        # A list directly inside a list.
        (6, (KIND_NODE_LIST, 18, 18, 0, 2, 0), 6),
        # The root as a list.
        (1, (KIND_NODE_LIST, 0, 18, 0, 0, 2), 1),
        # The root with a parent.
        (1, (kind.SOURCE_FILE, 0, 18, 0, 3, EXTENDED), 1),
    ],
)
def test_broken_links_are_refused_with_the_node(index: int, record: Record, failing: int) -> None:
    error = refusal(with_record(index, record))
    assert error.index == failing, str(error)
    assert str(error).startswith(f"node {failing}: ")
