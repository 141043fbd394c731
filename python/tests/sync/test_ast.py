"""The source-file reader on buffers built here in both layouts (protocol versions 5 and 9,
the `layout` fixture): header fields, `forEachChild` order, the preorder walk, and every
link check."""

from __future__ import annotations

import struct

import pytest

from agentproto.sync.ast import (
    FORMAT_V5,
    FORMAT_V9,
    FORMATS,
    KIND_NODE_LIST,
    AstError,
    Format,
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


@pytest.fixture(params=list(FORMATS.values()), ids=[f"v{version}" for version in FORMATS])
def layout(request: pytest.FixtureRequest) -> Format:
    found: Format = request.param
    return found


def build(
    layout: Format, strings: list[str], extended: list[int], records: list[Record], version: int | None = None
) -> bytes:
    """A buffer in `layout` (its header size) with `version` (default: the layout's) in the
    metadata word."""
    offsets: list[int] = []
    data = b""
    for text in strings:
        offsets.append(len(data))
        data += text.encode()
        offsets.append(len(data))
    string_offsets = layout.header_size
    string_data = string_offsets + 4 * len(offsets)
    extended_data = string_data + len(data)
    nodes = extended_data + 4 * len(extended)
    stated = layout.version if version is None else version
    header = [stated << 24, 0x1111, 0x2222, 0x3333, 0x4444, 7, string_offsets, string_data, extended_data, nodes]
    header.append(nodes)
    if layout.header_size == 64:
        header += [5, 1, 0, 0, 0]  # node id 0x1_0000_0005, lease 0, no binder data
    assert len(header) * 4 == layout.header_size
    out = struct.pack(f"<{len(header) + len(offsets)}I", *header, *offsets) + data
    out += struct.pack(f"<{len(extended)}I", *extended)
    for record in records:
        out += struct.pack("<7I", *record, 0)
    return out


def sample_records(layout: Format) -> list[Record]:
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
    kinds = layout.kinds
    return [
        (0, 0, 0, 0, 0, 0),
        (kinds.source_file, 0, 18, 0, 0, EXTENDED),
        (KIND_NODE_LIST, 0, 18, 7, 1, 2),
        (kinds.interface_declaration, 0, 18, 6, 2, 0b10),
        (kinds.jsdoc, 0, 0, 5, 3, 0),
        (kind.IDENTIFIER, 9, 15, 0, 3, STRING | 2),
        (kinds.jsdoc, 18, 18, 0, 2, 0),
        (KIND_NODE_LIST, 18, 18, 8, 1, 0),
        (kind.END_OF_FILE_TOKEN, 18, 18, 0, 1, 0),
    ]


def sample(layout: Format, records: list[Record] | None = None) -> SourceFile:
    return SourceFile(build(layout, [TEXT, "Point", "/a.ts"], [0, 4, 4], records or sample_records(layout)))


def copy(view: memoryview | None) -> bytes | None:
    return None if view is None else bytes(view)


def node(file: SourceFile, index: int) -> Node:
    found = file.node(index)
    assert found is not None
    return found


def indices(nodes: object) -> list[int]:
    return [item.index for item in nodes]  # type: ignore[attr-defined]


def test_header_fields_are_read(layout: Format) -> None:
    file = sample(layout)
    assert file.record_count == 9
    assert file.parse_options == 7
    assert file.content_hash == (0x4444 << 96) | (0x3333 << 64) | (0x2222 << 32) | 0x1111
    assert copy(file.text) == TEXT.encode()
    assert copy(file.file_name) == b"/a.ts"
    assert copy(file.path) == b"/a.ts"
    assert file.format == layout
    assert (file.node_id, file.lease) == ((0x1_0000_0005, 0) if layout.version == 9 else (None, None))


def test_the_reader_takes_any_buffer_without_copying(layout: Format) -> None:
    data = bytearray(build(layout, [TEXT, "Point", "/a.ts"], [0, 4, 4], sample_records(layout)))
    file = SourceFile(memoryview(data))
    assert file.bytes.obj is data
    data[layout.header_size + 6 * 4] = ord("P")  # the first byte of the text, changed in place
    assert file.text is not None and bytes(file.text[:1]) == b"P"


def test_children_flatten_lists_and_skip_direct_jsdoc(layout: Format) -> None:
    file = sample(layout)
    assert indices(file.root().children()) == [3, 6, 8]
    assert indices(node(file, 3).children()) == [5]
    assert indices(node(file, 5).children()) == []


def test_descendants_are_the_recursive_walk_in_preorder(layout: Format) -> None:
    file = sample(layout)
    assert indices(file.root().descendants()) == [3, 5, 6, 8]
    assert indices(node(file, 3).descendants()) == [5]

    def walk(parent: Node, out: list[int]) -> None:
        for child in parent.children():
            out.append(child.index)
            walk(child, out)

    recursive: list[int] = []
    walk(file.root(), recursive)
    assert indices(file.root().descendants()) == recursive


def test_raw_children_keep_lists_and_jsdoc(layout: Format) -> None:
    file = sample(layout)
    raw = list(file.root().raw_children())
    assert [type(item) for item in raw] == [NodeList, NodeList, Node]
    statements, empty, end = raw
    assert isinstance(statements, NodeList) and isinstance(empty, NodeList) and isinstance(end, Node)
    assert (statements.index, len(statements), len(empty), end.kind) == (2, 2, 0, kind.END_OF_FILE_TOKEN)
    assert list(empty) == []
    assert indices(statements) == [3, 6]
    assert all(isinstance(element, Node) for element in statements)
    assert len(list(node(file, 3).raw_children())) == 2


def test_parent_skips_lists_and_the_root_has_none(layout: Format) -> None:
    file = sample(layout)
    assert node(file, 3).parent == file.root()
    assert node(file, 5).parent == node(file, 3)
    assert file.root().parent is None
    assert file.node(2) is None, "a list index is not a node"
    assert file.node(0) is None and file.node(9) is None


def test_node_fields_and_text(layout: Format) -> None:
    file = sample(layout)
    identifier = node(file, 5)
    assert (identifier.kind, identifier.pos, identifier.end) == (kind.IDENTIFIER, 9, 15)
    assert copy(identifier.text) == b"Point"
    assert identifier.child_mask is None
    assert node(file, 3).child_mask == 0b10
    assert node(file, 3).text is None
    assert copy(file.root().text) == TEXT.encode()
    assert file.root().has_children and not identifier.has_children


def test_negative_positions_read_as_signed(layout: Format) -> None:
    records = sample_records(layout)
    records[8] = (kind.END_OF_FILE_TOKEN, 0xFFFF_FFFF, 18, 0, 1, 0)
    assert node(sample(layout, records), 8).pos == -1


def test_for_each_child_stops_at_the_first_value(layout: Format) -> None:
    file = sample(layout)
    seen: list[int] = []

    def visit(child: Node) -> int | None:
        seen.append(child.index)
        return child.index if child.kind == layout.kinds.jsdoc else None

    assert file.root().for_each_child(visit) == 6
    assert seen == [3, 6]
    assert node(file, 5).for_each_child(visit) is None


def test_out_of_range_strings_are_none(layout: Format) -> None:
    file = sample(layout)
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
    # A version-9 word with only a version-5 header behind it.
    assert str(refusal(bytes([0, 0, 0, 9]) + bytes(56))) == "60 bytes is shorter than the 64-byte header"
    for version in (4, 6, 8, 10):
        data = build(FORMAT_V5, [TEXT], [0], sample_records(FORMAT_V5), version)
        assert str(refusal(data)) == f"protocol version {version}, expected one of [5, 9]"


def test_each_version_numbers_the_moved_kinds_one_higher() -> None:
    # 7.1 inserted `SourceKeyword` at 167: every kind from there up moved by one.
    v5, v9 = FORMAT_V5.kinds, FORMAT_V9.kinds
    assert (v9.interface_declaration, v9.source_file, v9.jsdoc) == (
        v5.interface_declaration + 1,
        v5.source_file + 1,
        v5.jsdoc + 1,
    )
    assert (FORMAT_V5.header_size, FORMAT_V9.header_size) == (44, 64)


def test_sections_out_of_order_are_refused(layout: Format) -> None:
    data = bytearray(sample(layout).bytes)
    extended = struct.unpack_from("<I", data, 32)[0]
    struct.pack_into("<I", data, 28, extended + 4)  # the strings after the extended data
    assert "not in order" in str(refusal(bytes(data)))
    data = bytearray(sample(layout).bytes)
    struct.pack_into("<I", data, 40, len(data) + 28)
    assert "not in order" in str(refusal(bytes(data)))
    data = bytearray(sample(layout).bytes)
    struct.pack_into("<I", data, 24, layout.header_size - 4)  # string offsets inside the header
    assert "not in order" in str(refusal(bytes(data)))


def test_a_partial_node_section_is_refused(layout: Format) -> None:
    assert "node section" in str(refusal(bytes(sample(layout).bytes)[:-1]))
    only_nil = build(layout, [], [], [(0, 0, 0, 0, 0, 0)])
    assert str(refusal(only_nil)) == "node section of 28 bytes is not 2 or more whole 28-byte nodes"


def with_record(layout: Format, index: int, record: Record) -> bytes:
    records = sample_records(layout)
    records[index] = record
    return build(layout, [TEXT, "Point", "/a.ts"], [0, 4, 4], records)


JSDOC, INTERFACE, SOURCE = -1, -2, -3
"""Stand-ins in the cases below for the kinds whose number depends on the layout."""


@pytest.mark.parametrize(
    ("index", "record", "failing"),
    [
        # A node that is its own parent.
        (4, (JSDOC, 0, 0, 5, 4, 0), 4),
        # A parent after the node: its previous sibling's link now leads to another parent.
        (8, (kind.END_OF_FILE_TOKEN, 18, 18, 0, 9, 0), 7),
        # A next sibling that points backwards (would loop).
        (5, (kind.IDENTIFIER, 9, 15, 4, 3, STRING | 2), 5),
        # A next sibling with another parent.
        (3, (INTERFACE, 0, 18, 8, 2, 0b10), 3),
        # A next sibling past the end.
        (8, (kind.END_OF_FILE_TOKEN, 18, 18, 99, 1, 0), 8),
        # A list claiming elements it does not have.
        (7, (KIND_NODE_LIST, 18, 18, 8, 1, 3), 7),
        # A list directly inside a list.
        (6, (KIND_NODE_LIST, 18, 18, 0, 2, 0), 6),
        # The root as a list.
        (1, (KIND_NODE_LIST, 0, 18, 0, 0, 2), 1),
        # The root with a parent.
        (1, (SOURCE, 0, 18, 0, 3, EXTENDED), 1),
    ],
)
def test_broken_links_are_refused_with_the_node(layout: Format, index: int, record: Record, failing: int) -> None:
    stand_ins = {
        JSDOC: layout.kinds.jsdoc,
        INTERFACE: layout.kinds.interface_declaration,
        SOURCE: layout.kinds.source_file,
    }
    record = (stand_ins.get(record[0], record[0]), *record[1:])
    error = refusal(with_record(layout, index, record))
    assert error.index == failing, str(error)
    assert str(error).startswith(f"node {failing}: ")
