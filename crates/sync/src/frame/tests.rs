use super::*;

/// A tuple read, owned: type, name, payload.
type Owned = (MessageType, Vec<u8>, Vec<u8>);

fn read_one(bytes: &[u8], limits: Limits) -> Result<Option<Owned>, FrameError> {
    let mut reader = FrameReader::new(bytes, limits);
    let frame = reader.read()?;
    Ok(frame.map(|frame| (frame.kind, frame.name.to_vec(), frame.payload.to_vec())))
}

fn encoded(kind: MessageType, name: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode(&mut out, kind, name, payload).unwrap();
    out
}

#[test]
fn request_is_written_as_the_exact_wire_bytes() {
    let bytes = encoded(MessageType::Request, b"echo", b"hi");
    assert_eq!(bytes, [0x93, 0x01, 0xc4, 4, b'e', b'c', b'h', b'o', 0xc4, 2, b'h', b'i']);
}

#[test]
fn empty_name_and_payload_use_bin8_of_zero() {
    assert_eq!(encoded(MessageType::Response, b"", b""), [0x93, 0x04, 0xc4, 0, 0xc4, 0]);
}

#[test]
fn bin_header_takes_the_shortest_form_at_each_boundary() {
    let cases: [(u32, &[u8]); 6] = [
        (0, &[0xc4, 0]),
        (255, &[0xc4, 0xff]),
        (256, &[0xc5, 0x01, 0x00]),
        (65535, &[0xc5, 0xff, 0xff]),
        (65536, &[0xc6, 0x00, 0x01, 0x00, 0x00]),
        (u32::MAX, &[0xc6, 0xff, 0xff, 0xff, 0xff]),
    ];
    for (length, expected) in cases {
        let (header, used) = bin_header(length);
        assert_eq!(&header[..used], expected, "length {length}");
    }
}

#[test]
fn boundary_lengths_round_trip_through_writer_and_reader() {
    for length in [0usize, 1, 255, 256, 65535, 65536, 65537, 200_000] {
        let payload: Vec<u8> = (0..length).map(|index| (index % 251) as u8).collect();
        let mut wire = Vec::new();
        let mut writer = FrameWriter::new(&mut wire);
        writer.write(MessageType::Call, b"readFile", &payload).unwrap();
        let expected_header = bin_header(length as u32);
        let payload_header_at = 2 + 2 + b"readFile".len();
        assert_eq!(
            &wire[payload_header_at..payload_header_at + expected_header.1],
            &expected_header.0[..expected_header.1]
        );
        let (kind, name, read_payload) = read_one(&wire, Limits::default()).unwrap().unwrap();
        assert_eq!(kind, MessageType::Call);
        assert_eq!(name, b"readFile");
        assert_eq!(read_payload, payload, "length {length}");
    }
}

#[test]
fn reader_accepts_uint8_type_and_longer_than_needed_bin_forms() {
    // Not what our writer produces, but valid MessagePack for the same tuple.
    let bytes = [0x93, 0xcc, 0x05, 0xc5, 0x00, 0x01, b'x', 0xc6, 0, 0, 0, 2, b'n', b'o'];
    let (kind, name, payload) = read_one(&bytes, Limits::default()).unwrap().unwrap();
    assert_eq!((kind, name.as_slice(), payload.as_slice()), (MessageType::Error, &b"x"[..], &b"no"[..]));
}

#[test]
fn every_type_byte_maps_both_ways() {
    for value in 1..=6u8 {
        assert_eq!(MessageType::from_byte(value).unwrap().as_byte(), value);
    }
    assert_eq!(MessageType::from_byte(0), None);
    assert_eq!(MessageType::from_byte(7), None);
}

#[test]
fn clean_end_of_stream_reads_as_none() {
    assert!(read_one(&[], Limits::default()).unwrap().is_none());
}

#[test]
fn consecutive_tuples_are_read_in_order_with_buffers_reused() {
    let mut wire = encoded(MessageType::Call, b"fileExists", b"\"/a\"");
    wire.extend(encoded(MessageType::Response, b"getSourceFile", &[7u8; 300]));
    let mut reader = FrameReader::new(wire.as_slice(), Limits::default());
    let first = reader.read().unwrap().unwrap();
    assert_eq!((first.kind, first.name), (MessageType::Call, &b"fileExists"[..]));
    let second = reader.read().unwrap().unwrap();
    assert_eq!((second.kind, second.name, second.payload.len()), (MessageType::Response, &b"getSourceFile"[..], 300));
    assert!(reader.read().unwrap().is_none());
}

#[test]
fn wrong_array_header_is_refused() {
    let error = read_one(&[0x92, 0x01], Limits::default()).unwrap_err();
    assert!(matches!(error, FrameError::ArrayHeader { found: 0x92 }), "{error:?}");
    assert_eq!(error.to_string(), "expected a fixarray of 3 (0x93), found 0x92");
}

#[test]
fn type_marker_that_is_not_an_unsigned_integer_is_refused() {
    for marker in [0xa1u8, 0xcd, 0xd0, 0xff] {
        let error = read_one(&[0x93, marker, 0xc4, 0, 0xc4, 0], Limits::default()).unwrap_err();
        assert!(matches!(error, FrameError::TypeMarker { found } if found == marker), "{error:?}");
    }
}

#[test]
fn type_outside_one_to_six_is_refused() {
    for bytes in [&[0x93u8, 0x00][..], &[0x93, 0x07], &[0x93, 0xcc, 0xff]] {
        let error = read_one(bytes, Limits::default()).unwrap_err();
        assert!(matches!(error, FrameError::UnknownType { .. }), "{error:?}");
    }
}

#[test]
fn name_or_payload_that_is_not_bin_is_refused() {
    // A str8 name (0xd9) and a fixstr payload (0xa2) are MessagePack, but not bin.
    let error = read_one(&[0x93, 0x01, 0xd9, 1, b'x', 0xc4, 0], Limits::default()).unwrap_err();
    assert!(matches!(error, FrameError::BinMarker { field: Field::Name, found: 0xd9 }), "{error:?}");
    let error = read_one(&[0x93, 0x01, 0xc4, 1, b'x', 0xa2, b'h', b'i'], Limits::default()).unwrap_err();
    assert!(matches!(error, FrameError::BinMarker { field: Field::Payload, found: 0xa2 }), "{error:?}");
}

#[test]
fn lengths_over_the_limits_are_refused_before_reading_the_bytes() {
    let limits = Limits { max_name: 3, max_payload: 256 };
    let error = read_one(&encoded(MessageType::Request, b"echo", b""), limits).unwrap_err();
    assert!(matches!(error, FrameError::TooLong { field: Field::Name, length: 4, limit: 3 }), "{error:?}");
    // The payload header says 257 bytes; none follow, and none are needed to refuse it.
    let header = [0x93, 0x04, 0xc4, 1, b'x', 0xc5, 0x01, 0x01];
    let error = read_one(&header, limits).unwrap_err();
    assert!(matches!(error, FrameError::TooLong { field: Field::Payload, length: 257, limit: 256 }), "{error:?}");
    // Exactly at the limit is fine.
    assert!(read_one(&encoded(MessageType::Response, b"x", &[0; 256]), limits).unwrap().is_some());
}

#[test]
fn end_of_stream_mid_tuple_names_the_stage() {
    let whole = encoded(MessageType::Response, b"name", &[1u8; 300]);
    let expected = [
        (1, "message type"),
        (2, "name length"),
        (3, "name length"),
        (5, "name"),
        (8, "payload length"),
        (10, "payload length"),
        (11, "payload"),
        (whole.len() - 1, "payload"),
    ];
    for (cut, stage) in expected {
        let error = read_one(&whole[..cut], Limits::default()).unwrap_err();
        match error {
            FrameError::UnexpectedEof { stage: found } => assert_eq!(found, stage, "cut at {cut}"),
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
}

#[test]
fn swapped_out_payload_survives_the_next_read() {
    let mut wire = encoded(MessageType::Request, b"a", b"first");
    wire.extend(encoded(MessageType::Request, b"b", b"second"));
    let mut reader = FrameReader::new(wire.as_slice(), Limits::default());
    reader.read().unwrap().unwrap();
    let mut kept = Vec::new();
    reader.swap_payload(&mut kept);
    reader.read().unwrap().unwrap();
    assert_eq!((kept.as_slice(), reader.payload()), (&b"first"[..], &b"second"[..]));
}
