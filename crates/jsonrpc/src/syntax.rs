//! Where a line stops being JSON, for the position a parse error (-32700) reports.
//!
//! The position is defined without reference to any parser, so that every SDK reports
//! the same one (vectors/README.md, "Error texts"): it is the first character at which
//! the text stops being the beginning of some JSON text (RFC 8259, whitespace allowed
//! around the value), or the end of the input when all of it is such a beginning.
//! Lines and columns count from 1; a column counts characters (Unicode scalar values)
//! from the start of its line. This scan runs only after the parser has refused a line.

/// Where a line stopped being JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Line number, from 1 (lines end at `\n`).
    pub line: u32,
    /// Column, from 1, in characters from the start of the line.
    pub column: u32,
    /// Whether the input ended before the JSON text was complete.
    pub eof: bool,
}

/// The position of the first character of `text` that cannot continue a JSON text,
/// or `None` when `text` is one whole JSON text.
pub fn first_invalid(text: &str) -> Option<Position> {
    let Err((offset, eof)) = scan(text.as_bytes()) else { return None };
    Some(Position { eof, ..position_at(&text[..offset]) })
}

/// The position just after `before` (the text of a line up to some point).
pub(crate) fn position_at(before: &str) -> Position {
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    Position { line: saturate(line), column: saturate(column), eof: false }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[derive(Clone, Copy)]
enum Want {
    Value,
    Key,
    After,
}

/// `(byte offset, input ended)` of the first byte that cannot continue a JSON text.
fn scan(s: &[u8]) -> Result<(), (usize, bool)> {
    let n = s.len();
    let ws = |mut i: usize| {
        while i < n && matches!(s[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        i
    };
    let mut stack: Vec<u8> = Vec::new();
    let mut want = Want::Value;
    let mut i = ws(0);
    loop {
        match want {
            Want::Value => {
                i = ws(i);
                if i == n {
                    return Err((n, true));
                }
                match s[i] {
                    open @ (b'{' | b'[') => {
                        let close = if open == b'{' { b'}' } else { b']' };
                        i = ws(i + 1);
                        if i < n && s[i] == close {
                            i += 1;
                            want = Want::After;
                        } else {
                            stack.push(open);
                            want = if open == b'{' { Want::Key } else { Want::Value };
                        }
                    }
                    first => {
                        i = match first {
                            b'"' => string(s, i),
                            b't' => literal(s, i, b"true"),
                            b'f' => literal(s, i, b"false"),
                            b'n' => literal(s, i, b"null"),
                            b'-' | b'0'..=b'9' => number(s, i),
                            _ => Err((i, false)),
                        }?;
                        want = Want::After;
                    }
                }
            }
            Want::Key => {
                i = ws(i);
                if i == n {
                    return Err((n, true));
                }
                if s[i] != b'"' {
                    return Err((i, false));
                }
                i = ws(string(s, i)?);
                if i == n {
                    return Err((n, true));
                }
                if s[i] != b':' {
                    return Err((i, false));
                }
                i += 1;
                want = Want::Value;
            }
            Want::After => {
                i = ws(i);
                let Some(&top) = stack.last() else {
                    return if i < n { Err((i, false)) } else { Ok(()) };
                };
                if i == n {
                    return Err((n, true));
                }
                match (s[i], top) {
                    (b',', b'{') => want = Want::Key,
                    (b',', _) => want = Want::Value,
                    (b'}', b'{') | (b']', b'[') => {
                        stack.pop();
                    }
                    _ => return Err((i, false)),
                }
                i += 1;
            }
        }
    }
}

/// Scans the string starting at `s[i] == '"'`: `Ok(end)` past its closing quote, or
/// `Err` with the failure (as `scan` returns it).
fn string(s: &[u8], i: usize) -> Result<usize, (usize, bool)> {
    let n = s.len();
    let mut j = i + 1;
    loop {
        if j == n {
            return Err((n, true));
        }
        match s[j] {
            b'"' => return Ok(j + 1),
            0..=0x1f => return Err((j, false)),
            b'\\' => {
                if j + 1 == n {
                    return Err((n, true));
                }
                match s[j + 1] {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                    b'u' => {
                        let hex = &s[j + 2..n.min(j + 6)];
                        if let Some(k) = hex.iter().position(|b| !b.is_ascii_hexdigit()) {
                            return Err((j + 2 + k, false));
                        }
                        if hex.len() < 4 {
                            return Err((n, true));
                        }
                        j += 6;
                    }
                    _ => return Err((j + 1, false)),
                }
            }
            _ => j += 1,
        }
    }
}

fn literal(s: &[u8], i: usize, word: &[u8]) -> Result<usize, (usize, bool)> {
    for (k, &b) in word.iter().enumerate() {
        match s.get(i + k) {
            None => return Err((s.len(), true)),
            Some(&c) if c != b => return Err((i + k, false)),
            Some(_) => {}
        }
    }
    Ok(i + word.len())
}

fn number(s: &[u8], i: usize) -> Result<usize, (usize, bool)> {
    let n = s.len();
    let at = |j: usize| s.get(j).copied();
    let digits = |mut j: usize| {
        while matches!(at(j), Some(b'0'..=b'9')) {
            j += 1;
        }
        j
    };
    // One required digit at `j`, then any more.
    let first_digit = |j: usize| match at(j) {
        None => Err((n, true)),
        Some(b'0'..=b'9') => Ok(digits(j + 1)),
        Some(_) => Err((j, false)),
    };
    let mut j = if at(i) == Some(b'-') { i + 1 } else { i };
    j = match at(j) {
        None => return Err((n, true)),
        Some(b'0') => j + 1,
        Some(b'1'..=b'9') => digits(j + 1),
        Some(_) => return Err((j, false)),
    };
    if at(j) == Some(b'.') {
        j = first_digit(j + 1)?;
    }
    if matches!(at(j), Some(b'e' | b'E')) {
        j += 1;
        if matches!(at(j), Some(b'+' | b'-')) {
            j += 1;
        }
        j = first_digit(j)?;
    }
    Ok(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Option<(u32, u32, bool)> {
        first_invalid(text).map(|p| (p.line, p.column, p.eof))
    }

    #[test]
    fn whole_json_texts_have_no_position() {
        for text in ["{}", " [ ] ", r#"{"a":[1,-0.5e+3,"\u00e9\n",true,false,null,{}]}"#, "0", "\"x\"\r\n"] {
            assert_eq!(at(text), None, "{text}");
        }
    }

    #[test]
    fn the_first_character_that_cannot_continue_is_reported() {
        let cases = [
            (r#"{"a":1,}"#, (1, 8, false)),
            (r#"{"a" 1}"#, (1, 6, false)),
            ("{} x", (1, 4, false)),
            ("01", (1, 2, false)),
            ("-x", (1, 2, false)),
            ("1.x", (1, 3, false)),
            ("1e+", (1, 4, true)),
            ("trux", (1, 4, false)),
            ("hello", (1, 1, false)),
            ("[1 2]", (1, 4, false)),
            ("[1}", (1, 3, false)),
            (r#"{"k":"a\x"}"#, (1, 9, false)),
            (r#"{"k":"\u12G4"}"#, (1, 11, false)),
            ("\"a\tb\"", (1, 3, false)),
            ("\u{feff}{}", (1, 1, false)),
            (r#"{"é":"ü" ,]"#, (1, 11, false)),
            (r#"{"😀":1 ,]"#, (1, 9, false)),
            ("{\n  \"a\": 1\n  \"b\": 2\n}", (3, 3, false)),
        ];
        for (text, want) in cases {
            assert_eq!(at(text), Some(want), "{text:?}");
        }
    }

    #[test]
    fn a_text_cut_short_ends_at_the_end_of_input() {
        for (text, column) in
            [("", 1), (r#"{"jsonrpc":"2.0","id":1,"method":"#, 34), ("[1,", 4), ("tr", 3), ("\"ab", 4)]
        {
            assert_eq!(at(text), Some((1, column, true)), "{text:?}");
        }
    }
}
