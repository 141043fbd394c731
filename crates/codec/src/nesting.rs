//! The nesting bound every JSON reader here enforces (serde_json skips raw values
//! without one).

/// Whether `bytes` nests arrays/objects deeper than `limit` (brackets inside strings
/// do not count). serde_json skips raw values without a depth check, so the envelope,
/// the careful decode attempt and other bindings that take JSON bodies (A2A's
/// HTTP+JSON) enforce the limit themselves; the exact scan only runs when there are enough brackets to
/// possibly exceed it.
pub fn nesting_exceeds(bytes: &[u8], limit: usize) -> bool {
    if bytes.len() <= limit {
        return false;
    }
    if count_opening(bytes) <= limit {
        return false;
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// How many bytes of `bytes` are `[` or `{`, strings included (an upper bound on
/// the nesting depth). This runs on every line, so it is written for the vectoriser:
/// `[` (0x5B) and `{` (0x7B) differ only in bit 0x20, so one compare finds both, and
/// the matches are summed in byte lanes over blocks of at most 255 bytes (a byte lane
/// cannot overflow within one block) before being widened once per block. Summing
/// straight into a `usize` makes the compiler widen every byte and runs ~8× slower.
fn count_opening(bytes: &[u8]) -> usize {
    let mut total = 0usize;
    for block in bytes.chunks(255) {
        let in_block: u8 = block.iter().fold(0u8, |n, &byte| n.wrapping_add(u8::from(byte | 0x20 == b'{')));
        total += usize::from(in_block);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opening_brackets_are_counted_across_block_boundaries() {
        // The count runs in blocks of 255 bytes with byte-wide sums: lengths around the
        // block size and runs of brackets longer than a block must count exactly.
        for len in [0, 1, 254, 255, 256, 509, 510, 511, 1_000, 70_000] {
            for pattern in [&b"{"[..], b"[", b"a{b[c", b"{}[]\"x"] {
                let bytes: Vec<u8> = pattern.iter().copied().cycle().take(len).collect();
                let expected = bytes.iter().filter(|&&b| b == b'[' || b == b'{').count();
                assert_eq!(count_opening(&bytes), expected, "len {len}, pattern {pattern:?}");
            }
        }
        // `;` (0x3B) and `[` (0x5B) differ in one bit too, but not in 0x20.
        assert_eq!(count_opening(b";K;k"), 0);
    }

    #[test]
    fn the_bracket_count_sees_both_kinds_and_nothing_else() {
        // Every byte value once (but quotes, escapes and closers, which the exact scan
        // interprets), plus brackets: only `[` and `{` may count as openings.
        let mut line: Vec<u8> = (0u8..=255).filter(|b| !b"\"\\]}".contains(b)).collect();
        assert!(!nesting_exceeds(&line, 2), "{{ and [ count once each");
        line.extend_from_slice(b"[[{");
        assert!(nesting_exceeds(&line, 4), "five openings, none closed");
        assert!(!nesting_exceeds(br#"{"a":"[[[[[[[[[[[[["}"#, 2), "brackets inside a string do not nest");
    }
}
