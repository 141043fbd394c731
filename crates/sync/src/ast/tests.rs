use std::ops::ControlFlow;

use super::*;

/// One node record: kind, pos, end, next, parent, data (flags are 0).
type Record = (u32, u32, u32, u32, u32, u32);

const STRING: u32 = DATA_TYPE_STRING;
const EXTENDED: u32 = DATA_TYPE_EXTENDED;

const FORMATS: [&Format; 2] = [&FORMAT_V5, &FORMAT_V9];

/// Builds a buffer in `format`'s layout (header size) from its parts, with
/// `version` in the metadata word.
fn build_as(format: &Format, version: u32, strings: &[&str], extended: &[u32], records: &[Record]) -> Vec<u8> {
    let mut offsets = Vec::new();
    let mut data = Vec::new();
    for text in strings {
        offsets.push(data.len() as u32);
        data.extend_from_slice(text.as_bytes());
        offsets.push(data.len() as u32);
    }
    let string_offsets = format.header_size as u32;
    let string_data = string_offsets + 4 * offsets.len() as u32;
    let extended_data = string_data + data.len() as u32;
    let structured = extended_data + 4 * extended.len() as u32;
    let nodes = structured;
    let mut out = Vec::new();
    let mut header = vec![
        version << 24,
        0x1111,
        0x2222,
        0x3333,
        0x4444,
        7,
        string_offsets,
        string_data,
        extended_data,
        structured,
        nodes,
    ];
    if format.header_size == 64 {
        // Node id 0x1_0000_0005, lease 0, no binder data.
        header.extend([5, 1, 0, 0, 0]);
    }
    assert_eq!(header.len() * 4, format.header_size);
    for value in header.iter().chain(&offsets) {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(&data);
    for value in extended {
        out.extend_from_slice(&value.to_le_bytes());
    }
    for &(kind, pos, end, next, parent, data) in records {
        for value in [kind, pos, end, next, parent, data, 0] {
            out.extend_from_slice(&value.to_le_bytes());
        }
    }
    out
}

fn build(format: &Format, strings: &[&str], extended: &[u32], records: &[Record]) -> Vec<u8> {
    build_as(format, format.version, strings, extended, records)
}

const TEXT: &str = "interface Point {}";

/// `interface Point {}` with a JSDoc on the interface, a JSDoc as a list
/// element, and an empty list:
///
/// ```text
/// 1 SourceFile
/// ├─ 2 NodeList(2)
/// │  ├─ 3 InterfaceDeclaration
/// │  │  ├─ 4 JSDoc          (skipped: a direct child)
/// │  │  └─ 5 Identifier "Point"
/// │  └─ 6 JSDoc             (visited: a list element)
/// ├─ 7 NodeList(0)
/// └─ 8 EndOfFileToken
/// ```
fn sample_records(kinds: &Kinds) -> Vec<Record> {
    vec![
        (0, 0, 0, 0, 0, 0),
        (kinds.source_file, 0, 18, 0, 0, EXTENDED),
        (KIND_NODE_LIST, 0, 18, 7, 1, 2),
        (kinds.interface_declaration, 0, 18, 6, 2, 0b10),
        (kinds.jsdoc, 0, 0, 5, 3, 0),
        (kind::IDENTIFIER, 9, 15, 0, 3, STRING | 2),
        (kinds.jsdoc, 18, 18, 0, 2, 0),
        (KIND_NODE_LIST, 18, 18, 8, 1, 0),
        (kind::END_OF_FILE_TOKEN, 18, 18, 0, 1, 0),
    ]
}

fn sample(format: &Format) -> Vec<u8> {
    build(format, &[TEXT, "Point", "/a.ts"], &[0, 4, 4], &sample_records(&format.kinds))
}

fn indices<'f>(nodes: impl Iterator<Item = Node<'f>>) -> Vec<u32> {
    nodes.map(|node| node.index()).collect()
}

#[test]
fn header_fields_are_read() {
    for format in FORMATS {
        let bytes = sample(format);
        let file = SourceFile::new(&bytes).unwrap();
        assert_eq!(file.record_count(), 9);
        assert_eq!(file.parse_options(), 7);
        assert_eq!(file.content_hash(), (0x4444u128 << 96) | (0x3333u128 << 64) | (0x2222u128 << 32) | 0x1111);
        assert_eq!(file.text(), Some(TEXT.as_bytes()));
        assert_eq!(file.file_name(), Some(&b"/a.ts"[..]));
        assert_eq!(file.path(), Some(&b"/a.ts"[..]));
        assert_eq!(file.format(), format);
        let expected_ids = if format.version == 9 { (Some(0x1_0000_0005), Some(0)) } else { (None, None) };
        assert_eq!((file.node_id(), file.lease()), expected_ids);
    }
}

#[test]
fn children_flatten_lists_and_skip_direct_jsdoc() {
    for format in FORMATS {
        let bytes = sample(format);
        let file = SourceFile::new(&bytes).unwrap();
        let root = file.root();
        assert_eq!(indices(root.children()), [3, 6, 8]);
        assert_eq!(indices(file.node(3).unwrap().children()), [5]);
        assert_eq!(indices(file.node(5).unwrap().children()), Vec::<u32>::new());
    }
}

#[test]
fn descendants_are_the_recursive_walk_in_preorder() {
    for format in FORMATS {
        let bytes = sample(format);
        let file = SourceFile::new(&bytes).unwrap();
        assert_eq!(indices(file.root().descendants()), [3, 5, 6, 8]);
        assert_eq!(indices(file.node(3).unwrap().descendants()), [5]);
        fn walk(node: Node<'_>, out: &mut Vec<u32>) {
            for child in node.children() {
                out.push(child.index());
                walk(child, out);
            }
        }
        let mut recursive = Vec::new();
        walk(file.root(), &mut recursive);
        assert_eq!(indices(file.root().descendants()), recursive);
    }
}

#[test]
fn raw_children_keep_lists_and_jsdoc() {
    for format in FORMATS {
        let bytes = sample(format);
        let file = SourceFile::new(&bytes).unwrap();
        let raw: Vec<_> = file.root().raw_children().collect();
        let [Child::List(statements), Child::List(empty), Child::Node(end)] = raw.as_slice() else {
            panic!("unexpected raw children {raw:?}");
        };
        assert_eq!((statements.index(), statements.len(), empty.len(), end.kind()), (2, 2, 0, kind::END_OF_FILE_TOKEN));
        assert!(empty.iter().next().is_none());
        let elements: Vec<u32> = statements
            .iter()
            .map(|child| match child {
                Child::Node(node) => node.index(),
                Child::List(list) => panic!("a list in a list: {list:?}"),
            })
            .collect();
        assert_eq!(elements, [3, 6]);
        assert_eq!(file.node(3).unwrap().raw_children().count(), 2);
    }
}

#[test]
fn parent_skips_lists_and_root_has_none() {
    for format in FORMATS {
        let bytes = sample(format);
        let file = SourceFile::new(&bytes).unwrap();
        assert_eq!(file.node(3).unwrap().parent(), Some(file.root()));
        assert_eq!(file.node(5).unwrap().parent(), file.node(3));
        assert_eq!(file.root().parent(), None);
        assert!(file.node(2).is_none(), "a list index is not a node");
        assert!(file.node(0).is_none() && file.node(9).is_none());
    }
}

#[test]
fn node_fields_and_text() {
    for format in FORMATS {
        let bytes = sample(format);
        let file = SourceFile::new(&bytes).unwrap();
        let identifier = file.node(5).unwrap();
        assert_eq!((identifier.kind(), identifier.pos(), identifier.end()), (kind::IDENTIFIER, 9, 15));
        assert_eq!(identifier.text(), Some(&b"Point"[..]));
        assert_eq!(identifier.child_mask(), None);
        assert_eq!(file.node(3).unwrap().child_mask(), Some(0b10));
        assert_eq!(file.node(3).unwrap().text(), None);
        assert_eq!(file.root().text(), Some(TEXT.as_bytes()));
        assert!(file.root().has_children() && !identifier.has_children());
    }
}

#[test]
fn for_each_child_stops_at_the_first_break() {
    for format in FORMATS {
        let bytes = sample(format);
        let file = SourceFile::new(&bytes).unwrap();
        let kinds = file.kinds();
        let mut seen = Vec::new();
        let found = file.root().for_each_child(|child| {
            seen.push(child.index());
            if child.kind() == kinds.jsdoc {
                ControlFlow::Break(child.index())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!((found, seen), (Some(6), vec![3, 6]));
    }
}

#[test]
fn out_of_range_strings_are_none() {
    for format in FORMATS {
        let bytes = sample(format);
        let file = SourceFile::new(&bytes).unwrap();
        assert_eq!(file.string(4), Some(&b"/a.ts"[..]));
        assert_eq!(file.string(5), None);
        assert_eq!(file.string(u32::MAX), None);
    }
}

fn error_of(bytes: &[u8]) -> AstError {
    SourceFile::new(bytes).unwrap_err()
}

#[test]
fn short_buffer_and_other_versions_are_refused() {
    assert_eq!(error_of(&[0; 43]), AstError::TooShort { length: 43, header_size: 44 });
    // A version-9 word with only a version-5 header behind it.
    let mut bytes = vec![0; 60];
    bytes[3] = 9;
    assert_eq!(error_of(&bytes), AstError::TooShort { length: 60, header_size: 64 });
    for version in [4, 6, 8, 10] {
        let bytes = build_as(&FORMAT_V5, version, &[TEXT], &[0], &sample_records(&FORMAT_V5.kinds));
        assert_eq!(error_of(&bytes), AstError::Version { found: version });
    }
    // Each version's kinds: 7.1 inserted one kind below these, so each is one higher.
    let [v5, v9] = [FORMAT_V5.kinds, FORMAT_V9.kinds];
    assert_eq!(
        [v9.interface_declaration, v9.source_file, v9.jsdoc],
        [v5.interface_declaration + 1, v5.source_file + 1, v5.jsdoc + 1]
    );
}

#[test]
fn sections_out_of_order_are_refused() {
    for format in FORMATS {
        let mut bytes = sample(format);
        // Put the strings section after the extended data.
        let extended = word(&bytes, 32);
        bytes[28..32].copy_from_slice(&(extended + 4).to_le_bytes());
        assert!(matches!(error_of(&bytes), AstError::Sections { .. }));
        let mut bytes = sample(format);
        let past_the_end = bytes.len() as u32 + 28;
        bytes[40..44].copy_from_slice(&past_the_end.to_le_bytes());
        assert!(matches!(error_of(&bytes), AstError::Sections { .. }));
        // String offsets inside the header.
        let mut bytes = sample(format);
        bytes[24..28].copy_from_slice(&(format.header_size as u32 - 4).to_le_bytes());
        assert!(matches!(error_of(&bytes), AstError::Sections { .. }));
    }
}

#[test]
fn partial_node_section_is_refused() {
    for format in FORMATS {
        let mut bytes = sample(format);
        bytes.pop();
        assert!(matches!(error_of(&bytes), AstError::NodeSection { .. }));
        let only_nil = build(format, &[], &[], &[(0, 0, 0, 0, 0, 0)]);
        assert!(matches!(error_of(&only_nil), AstError::NodeSection { length: 28 }));
    }
}

fn with_record(format: &Format, index: usize, record: Record) -> Vec<u8> {
    let mut records = sample_records(&format.kinds);
    records[index] = record;
    build(format, &[TEXT, "Point", "/a.ts"], &[0, 4, 4], &records)
}

#[test]
fn broken_links_are_refused_with_the_node() {
    for format in FORMATS {
        let kinds = &format.kinds;
        // (record replaced, new record, the node the check fails at)
        let cases = [
            // A node that is its own parent.
            (4, (kinds.jsdoc, 0, 0, 5, 4, 0), 4),
            // A parent that comes after the node: its previous sibling's link
            // now leads to another parent, which is where the check stops.
            (8, (kind::END_OF_FILE_TOKEN, 18, 18, 0, 9, 0), 7),
            // A next sibling that points backwards (would loop).
            (5, (kind::IDENTIFIER, 9, 15, 4, 3, STRING | 2), 5),
            // A next sibling with another parent.
            (3, (kinds.interface_declaration, 0, 18, 8, 2, 0b10), 3),
            // A next sibling past the end.
            (8, (kind::END_OF_FILE_TOKEN, 18, 18, 99, 1, 0), 8),
            // A list claiming elements it does not have.
            (7, (KIND_NODE_LIST, 18, 18, 8, 1, 3), 7),
        ];
        for (index, record, failing) in cases {
            match error_of(&with_record(format, index, record)) {
                AstError::Node { index: found, .. } => assert_eq!(found, failing, "{record:?}"),
                other => panic!("{record:?}: {other:?}"),
            }
        }
        let root_list = with_record(format, 1, (KIND_NODE_LIST, 0, 18, 0, 0, 2));
        assert!(matches!(error_of(&root_list), AstError::Node { index: 1, .. }));
    }
}

#[test]
fn list_inside_list_is_refused() {
    for format in FORMATS {
        let mut records = sample_records(&format.kinds);
        records[6] = (KIND_NODE_LIST, 18, 18, 0, 2, 0);
        let bytes = build(format, &[TEXT], &[0], &records);
        assert!(matches!(error_of(&bytes), AstError::Node { index: 6, .. }));
    }
}
