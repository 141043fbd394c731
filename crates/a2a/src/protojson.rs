//! The two ProtoJSON scalar encodings the generated types use that JSON has no type
//! for: `bytes` (base64 text) and `google.protobuf.Timestamp` (RFC 3339 text).

use serde::de::{Deserialize, Deserializer, Error as _};
use serde::ser::{Serialize, Serializer};
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine as _;

/// `task_id` → `taskId`: a proto field name as its ProtoJSON key.
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
        decoded.map(Bytes).map_err(|e| D::Error::custom(format!("invalid value: base64 text expected ({e})")))
    }
}

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

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.secs.div_euclid(86_400);
        let rem = self.secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60,
            self.nanos / 1_000_000
        )
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = agentproto_codec::de::Str::deserialize(d)?;
        Timestamp::parse(text.as_str()).map_err(D::Error::custom)
    }
}

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
