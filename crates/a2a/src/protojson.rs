//! The two ProtoJSON scalar encodings the generated types use that JSON has no type
//! for: `bytes` (base64 text) and `google.protobuf.Timestamp` (RFC 3339 text); the
//! readers the generated decoders call for what ProtoJSON accepts besides the canonical
//! form ([`Int32`], [`enum_name`]); and HTTP dates for the agent card's `Last-Modified`.

use agentproto_codec::{de, DecodeErrorKind};
use serde::de::{Deserialize, Deserializer};
use serde::ser::{Error as _, Serialize, Serializer};
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine as _;

/// `task_id` → `taskId`: a proto field name as its ProtoJSON key.
#[cfg(any(feature = "server", feature = "client"))]
pub(crate) fn lower_camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// A proto `int32` as ProtoJSON reads it: a JSON number or a string holding one, in
/// any notation (`5`, `"5"`, `5.0`, `1e0`) as long as the value is an integer in range.
/// Written as a plain JSON number (the generated code writes the `i32` itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Int32(pub(crate) i32);

impl<'de> Deserialize<'de> for Int32 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Int32;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 32-bit integer (a number or a string)")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Int32, E> {
                i32::try_from(v).map(Int32).map_err(|_| out_of_range(format!("the integer {v}")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Int32, E> {
                i32::try_from(v).map(Int32).map_err(|_| out_of_range(format!("the integer {v}")))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Int32, E> {
                if v.fract() != 0.0 || !v.is_finite() || v < f64::from(i32::MIN) || v > f64::from(i32::MAX) {
                    return Err(out_of_range(de::found_number(v)));
                }
                Ok(Int32(v as i32))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Int32, E> {
                let n = parse_integer(v).ok_or_else(|| out_of_range(de::found_string(v)))?;
                i32::try_from(n).map(Int32).map_err(|_| out_of_range(de::found_string(v)))
            }
        }
        d.deserialize_any(V)
    }
}

agentproto_codec::wants!(Int32, Phrase(INT32));

/// What an `int32` reads.
const INT32: &str = "an integer from -2147483648 to 2147483647, or a string holding one";

/// The failure of a number (or a string holding one) that is no `int32`.
fn out_of_range<E: serde::de::Error>(found: String) -> E {
    de::invalid(DecodeErrorKind::OutOfRange, INT32, found)
}

/// The integer a JSON number's text denotes (`-12`, `1.0`, `2.5e1`; not `2.5` or
/// `25e-2`), exactly; `None` when it is not a number, not integral, or beyond `i64`.
fn parse_integer(text: &str) -> Option<i64> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.split_once(['e', 'E']) {
        Some((m, e)) => {
            let e = e.strip_prefix('+').unwrap_or(e);
            let digits = e.strip_prefix('-').unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (m, e.parse::<i64>().ok()?)
        }
        None => (rest, 0),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) if !f.is_empty() => (i, f),
        Some(_) => return None,
        None => (mantissa, ""),
    };
    if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    // The value is `digits` × 10^shift.
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let shift = exponent.checked_sub(i64::try_from(frac.len()).ok()?)?;
    if digits.is_empty() {
        return Some(0);
    }
    let whole = if shift >= 0 {
        if shift > 19 {
            return None;
        }
        format!("{digits}{}", "0".repeat(shift as usize))
    } else {
        let cut = usize::try_from(-shift).ok()?;
        if cut > digits.len() {
            return None; // a non-zero value below 1
        }
        let (whole, fraction) = digits.split_at(digits.len() - cut);
        if fraction.bytes().any(|b| b != b'0') {
            return None;
        }
        if whole.is_empty() {
            return None;
        }
        whole.to_owned()
    };
    let n: i64 = whole.parse().ok()?;
    Some(if negative { -n } else { n })
}

/// Reads a ProtoJSON enum value: its name, or its proto number. `values` are the legal
/// names in proto order, the `*_UNSPECIFIED` zero left out, so number `n` is
/// `values[n - 1]` (the generator checks that the proto numbers its values so).
pub(crate) fn enum_name<'de, D: Deserializer<'de>>(
    d: D,
    values: &'static [&'static str],
) -> Result<agentproto_codec::de::Str<'de>, D::Error> {
    use std::borrow::Cow;
    struct V(&'static [&'static str]);
    impl V {
        fn number<E: serde::de::Error>(&self, n: i64) -> Result<agentproto_codec::de::Str<'static>, E> {
            match usize::try_from(n).ok().and_then(|n| n.checked_sub(1)).and_then(|i| self.0.get(i)) {
                Some(name) => Ok(agentproto_codec::de::Str(Cow::Borrowed(name))),
                None => {
                    let list = self.0.iter().enumerate().map(|(i, v)| format!("{} ({v})", i + 1));
                    let expected = format!("one of {}", list.collect::<Vec<_>>().join(", "));
                    Err(de::invalid(DecodeErrorKind::NotListed, expected, format!("the integer {n}")))
                }
            }
        }
    }
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = agentproto_codec::de::Str<'de>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an enum value name or number")
        }
        fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(agentproto_codec::de::Str(Cow::Borrowed(v)))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(agentproto_codec::de::Str(Cow::Owned(v.to_owned())))
        }
        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(agentproto_codec::de::Str(Cow::Owned(v)))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            self.number(v)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            self.number(i64::try_from(v).unwrap_or(i64::MAX))
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
            if v.fract() != 0.0 || !v.is_finite() || v.abs() > 1e9 {
                return Err(de::invalid(
                    DecodeErrorKind::WrongType,
                    "an enum value name or number",
                    de::found_number(v),
                ));
            }
            self.number(v as i64)
        }
    }
    d.deserialize_any(V(values))
}

/// A proto `bytes` value. Written as padded standard base64; read from standard or
/// URL-safe base64, padded or not (ProtoJSON accepts all four).
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct Bytes(pub Vec<u8>);

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Self {
        Bytes(v)
    }
}

impl From<&[u8]> for Bytes {
    fn from(v: &[u8]) -> Self {
        Bytes(v.to_vec())
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = agentproto_codec::de::Str::deserialize(d)?;
        let t = text.as_str();
        let decoded = if t.contains(['-', '_']) {
            if t.ends_with('=') {
                URL_SAFE.decode(t)
            } else {
                URL_SAFE_NO_PAD.decode(t)
            }
        } else if t.ends_with('=') {
            STANDARD.decode(t)
        } else {
            STANDARD_NO_PAD.decode(t)
        };
        decoded.map(Bytes).map_err(|_| de::invalid(DecodeErrorKind::WrongFormat, "base64 text", de::found_string(t)))
    }
}

agentproto_codec::wants!(Bytes, String);

/// A `google.protobuf.Timestamp`: an instant with nanosecond precision.
///
/// Written in UTC with milliseconds (`2026-11-21T10:00:00.000Z`), as A2A asks; read
/// from any RFC 3339 date-time (fractional seconds of 0 to 9 digits, `Z` or an offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp {
    /// Seconds since the Unix epoch.
    pub secs: i64,
    /// Nanoseconds within the second, below 1e9.
    pub nanos: u32,
}

/// Seconds in `0001-01-01T00:00:00Z..=9999-12-31T23:59:59Z`, the range ProtoJSON allows.
const MIN_SECS: i64 = -62_135_596_800;
const MAX_SECS: i64 = 253_402_300_799;

impl Timestamp {
    /// The current time.
    pub fn now() -> Self {
        let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        Timestamp { secs: d.as_secs() as i64, nanos: d.subsec_nanos() }
    }

    /// The instant `ms` milliseconds after the epoch.
    pub fn from_millis(ms: i64) -> Self {
        Timestamp { secs: ms.div_euclid(1000), nanos: (ms.rem_euclid(1000) as u32) * 1_000_000 }
    }

    /// Milliseconds since the epoch (sub-millisecond precision is dropped).
    pub fn as_millis(&self) -> i64 {
        self.secs * 1000 + i64::from(self.nanos / 1_000_000)
    }

    /// Parses an RFC 3339 date-time.
    pub fn parse(text: &str) -> Result<Self, String> {
        parse_rfc3339(text).ok_or_else(|| format!("invalid value: an RFC 3339 timestamp expected, found {text:?}"))
    }
}

impl Timestamp {
    /// The text form, `YYYY-MM-DDTHH:MM:SS.mmmZ`, written digit by digit (this runs for
    /// every status of every task written); `None` for a year outside `0000..=9999`,
    /// which [`fmt::Display`] spells with `write!`.
    fn text(&self) -> Option<[u8; 24]> {
        let [y, m, d, hour, minute, second, millis] = self.fields();
        if !(0..=9999).contains(&y) {
            return None;
        }
        let mut out = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut n: i64| {
            for i in (at..at + width).rev() {
                out[i] = b'0' + (n % 10) as u8;
                n /= 10;
            }
        };
        put(0, 4, y);
        put(5, 2, m);
        put(8, 2, d);
        put(11, 2, hour);
        put(14, 2, minute);
        put(17, 2, second);
        put(20, 3, millis);
        Some(out)
    }

    /// Year, month, day, hour, minute, second and millisecond, in UTC.
    fn fields(&self) -> [i64; 7] {
        let rem = self.secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(self.secs.div_euclid(86_400));
        [y, m, d, rem / 3600, rem % 3600 / 60, rem % 60, i64::from(self.nanos / 1_000_000)]
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(text) = self.text() {
            // Only ASCII digits and separators were written.
            return f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?);
        }
        let [y, m, d, hour, minute, second, millis] = self.fields();
        write!(f, "{y:04}-{m:02}-{d:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z")
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.text() {
            Some(text) => s.serialize_str(std::str::from_utf8(&text).map_err(S::Error::custom)?),
            None => s.collect_str(self),
        }
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = agentproto_codec::de::Str::deserialize(d)?;
        Timestamp::parse(text.as_str()).map_err(|_| {
            de::invalid(DecodeErrorKind::WrongFormat, "an RFC 3339 date-time", de::found_string(text.as_str()))
        })
    }
}

agentproto_codec::wants!(Timestamp, String);

fn parse_rfc3339(t: &str) -> Option<Timestamp> {
    let b = t.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = b.get(r)?;
        if !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(s).ok()?.parse().ok()
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let digits = i - start;
        if digits == 0 || digits > 9 {
            return None;
        }
        nanos = num(start..i)? as u32 * 10u32.pow(9 - digits as u32);
    }
    let offset = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let off = oh * 3600 + om * 60;
            if *sign == b'+' {
                off
            } else {
                -off
            }
        }
        _ => return None,
    };
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    (MIN_SECS..=MAX_SECS).contains(&secs).then_some(Timestamp { secs, nanos })
}

#[cfg(feature = "server")]
const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
#[cfg(feature = "server")]
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// An HTTP date (RFC 9110 IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`) of a Unix time.
#[cfg(feature = "server")]
pub(crate) fn http_date(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    // 1970-01-01 was a Thursday.
    let weekday = WEEKDAYS[(days + 4).rem_euclid(7) as usize];
    let month = MONTHS[(m - 1) as usize];
    format!("{weekday}, {d:02} {month} {y:04} {:02}:{:02}:{:02} GMT", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// The Unix time of an IMF-fixdate; `None` for anything else (the obsolete forms
/// included, which a recipient may ignore).
#[cfg(feature = "server")]
pub(crate) fn parse_http_date(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 29 || &text[3..5] != ", " || &text[25..] != " GMT" || !WEEKDAYS.contains(&&text[..3]) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok())?
    };
    let day = num(5..7)?;
    let month = MONTHS.iter().position(|m| *m == &text[8..11])? as i64 + 1;
    let year = num(12..16)?;
    let (h, mi, sec) = (num(17..19)?, num(20..22)?, num(23..25)?);
    if b[7] != b' ' || b[11] != b' ' || b[16] != b' ' || b[19] != b':' || b[22] != b':' {
        return None;
    }
    if day < 1 || day > days_in_month(year, month) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + mi * 60 + sec)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digit_writer_agrees_with_write_across_the_range() {
        let spelled = |t: &Timestamp| {
            let (days, rem) = (t.secs.div_euclid(86_400), t.secs.rem_euclid(86_400));
            let (y, m, d) = civil_from_days(days);
            let (h, mi, s, ms) = (rem / 3600, rem % 3600 / 60, rem % 60, t.nanos / 1_000_000);
            format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
        };
        let mut secs = MIN_SECS;
        while secs <= MAX_SECS {
            let t = Timestamp { secs, nanos: (secs.rem_euclid(1000) as u32) * 1_000_123 % 1_000_000_000 };
            assert_eq!(t.to_string(), spelled(&t));
            assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{}\"", spelled(&t)));
            secs += 7_777_777;
        }
        let far = Timestamp { secs: MAX_SECS + 86_400 * 366, nanos: 0 };
        assert!(far.text().is_none());
        assert_eq!(far.to_string(), spelled(&far));
    }

    #[test]
    fn timestamps_round_trip_with_milliseconds() {
        let t = Timestamp::parse("2026-11-21T10:00:00.123456Z").unwrap();
        assert_eq!(t.to_string(), "2026-11-21T10:00:00.123Z");
        assert_eq!(Timestamp::parse("2026-11-21T12:00:00+02:00").unwrap().to_string(), "2026-11-21T10:00:00.000Z");
        assert_eq!(Timestamp::parse("1970-01-01T00:00:00Z").unwrap(), Timestamp::default());
        assert_eq!(Timestamp::from_millis(-1).to_string(), "1969-12-31T23:59:59.999Z");
        assert_eq!(Timestamp::parse("2024-02-29T00:00:00Z").unwrap().as_millis(), 1_709_164_800_000);
        let now = Timestamp::from_millis(Timestamp::now().as_millis());
        assert_eq!(Timestamp::parse(&now.to_string()).unwrap(), now);
    }

    #[test]
    fn bad_timestamps_are_refused() {
        for bad in [
            "2026-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2026-11-21 10:00:00Z",
            "2026-11-21T10:00:00",
            "2026-11-21T10:00:00.Z",
            "2026-11-21T10:00:00.1234567890Z",
            "2026-11-21T24:00:00Z",
            "x",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
    }

    #[cfg(feature = "server")]
    #[test]
    fn http_dates_round_trip() {
        assert_eq!(http_date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        let now = Timestamp::now().secs;
        assert_eq!(parse_http_date(&http_date(now)), Some(now));
        for bad in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 31 Feb 1994 08:49:37 GMT", ""] {
            assert_eq!(parse_http_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn integers_in_every_json_notation() {
        for (text, want) in [
            ("0", 0),
            ("-0", 0),
            ("12", 12),
            ("-12", -12),
            ("1.0", 1),
            ("1e0", 1),
            ("1E+2", 100),
            ("2.5e1", 25),
            ("2500e-2", 25),
            ("0.0e5", 0),
            ("00012", 12),
            ("9223372036854775807", i64::MAX),
        ] {
            assert_eq!(parse_integer(text), Some(want), "{text}");
        }
        for bad in
            ["", "-", "1.", ".5", "2.5", "25e-2", "1e", "1e+", "0x10", " 1", "1 ", "1e30", "9223372036854775808", "+1"]
        {
            assert_eq!(parse_integer(bad), None, "{bad}");
        }
    }

    #[test]
    fn bytes_accept_every_base64_alphabet() {
        for text in ["\"+/8=\"", "\"+/8\"", "\"-_8=\"", "\"-_8\""] {
            let b: Bytes = serde_json::from_str(text).unwrap();
            assert_eq!(b.0, vec![0xfb, 0xff]);
        }
        assert_eq!(serde_json::to_string(&Bytes(b"tck".to_vec())).unwrap(), "\"dGNr\"");
        assert!(serde_json::from_str::<Bytes>("\"***\"").is_err());
    }
}
