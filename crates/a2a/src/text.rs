//! [`Text`]: the content of a text part, shared instead of copied.

use std::borrow::Borrow;
use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::de::{Deserialize, Deserializer, Visitor};
use serde::ser::{Serialize, Serializer};
use serde_json::value::RawValue;

/// The text of a [`Part`](crate::v1::Part): an immutable string whose clones share one
/// buffer.
///
/// A message's text can be megabytes long, and a server holds it in several places at
/// once: the executor's request, the task's history, the event that created the task,
/// an artifact that echoes it. Cloning a `Text` copies a pointer, not the text.
/// It reads as a `&str` (`Deref`, `AsRef`, `Display`) and is made from a `String` or
/// `&str` with `into()`. On the wire it is a JSON string like any other.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Arc<str>);

impl Text {
    /// The text as a `&str`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether two values share one buffer (a clone of the other), not only equal text.
    pub fn ptr_eq(a: &Text, b: &Text) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl Default for Text {
    fn default() -> Self {
        Text(Arc::from(""))
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(Arc::from(s))
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(Arc::from(s))
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Self {
        Text(Arc::from(s.as_str()))
    }
}

impl From<Arc<str>> for Text {
    fn from(s: Arc<str>) -> Self {
        Text(s)
    }
}

impl From<Text> for Arc<str> {
    fn from(t: Text) -> Self {
        t.0
    }
}

impl From<Text> for String {
    fn from(t: Text) -> Self {
        t.0.as_ref().to_owned()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl Serialize for Text {
    /// A JSON string. A large text met again inside `escaping_once` is written from the
    /// escaped copy made when it was first met.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.len() >= ESCAPE_ONCE_FROM {
            #[cfg(feature = "server")]
            if let Some(at) = SPLICING.with(|splicing| splicing.borrow().as_ref().map(|sp| sp.buf.len())) {
                // Inside `splicing`: an empty string now, the text spliced in when sent.
                let out = s.serialize_str("")?;
                SPLICING.with(|splicing| {
                    if let Some(sp) = splicing.borrow_mut().as_mut() {
                        // Written to the splicing buffer (`""`), or the splice is off.
                        if sp.buf.len() == at + 2 {
                            sp.texts.push((at + 1, Arc::clone(&self.0)));
                        } else {
                            sp.broken = true;
                        }
                    }
                });
                return Ok(out);
            }
            let raw = ESCAPED.with(|escaped| {
                let mut escaped = escaped.borrow_mut();
                let texts = escaped.as_mut()?;
                if let Some((_, raw)) = texts.iter().find(|(text, _)| Arc::ptr_eq(text, &self.0)) {
                    return Some(Arc::clone(raw));
                }
                let raw: Arc<RawValue> = serde_json::value::to_raw_value(&*self.0).ok()?.into();
                texts.push((Arc::clone(&self.0), Arc::clone(&raw)));
                Some(raw)
            });
            if let Some(raw) = raw {
                return raw.serialize(s);
            }
        }
        s.serialize_str(&self.0)
    }
}

/// Each large text met inside [`escaping_once`] (its buffer) and its escaped JSON string.
type Escaped = Vec<(Arc<str>, Arc<RawValue>)>;

/// Texts from this length on are escaped once per [`escaping_once`].
const ESCAPE_ONCE_FROM: usize = 64 << 10;

thread_local! {
    /// The escaped JSON strings of the large texts met so far inside [`escaping_once`]
    /// on this thread (`None` outside it).
    static ESCAPED: RefCell<Option<Escaped>> = const { RefCell::new(None) };
}

/// Runs `encode`, in which each large [`Text`] (one buffer, however many clones) is
/// JSON-escaped once however many times it is serialized: a store commit encodes a task
/// and its events, which hold the same message text (the task's history, the first
/// event's task). Only for `serde_json` serializers: inside, a large text serializes as a
/// `serde_json` raw value. The escaped copies are dropped when `encode` returns.
#[cfg(feature = "server")]
pub(crate) fn escaping_once<T>(encode: impl FnOnce() -> T) -> T {
    struct Restore(Option<Escaped>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            ESCAPED.with(|escaped| *escaped.borrow_mut() = outer);
        }
    }
    let _restore = Restore(ESCAPED.with(|escaped| escaped.replace(Some(Vec::new()))));
    encode()
}

/// What [`splicing`] encoded: the JSON with each large text left out (an empty string
/// in its place), and where each goes, after the opening quote of its string.
#[cfg(feature = "server")]
pub(crate) struct Spliced {
    pub(crate) buf: Vec<u8>,
    pub(crate) texts: Vec<(usize, Arc<str>)>,
    /// A text was serialized to some other writer: the splice points are not known.
    broken: bool,
}

#[cfg(feature = "server")]
thread_local! {
    /// The JSON being encoded by [`splicing`] on this thread (`None` outside it).
    static SPLICING: RefCell<Option<Spliced>> = const { RefCell::new(None) };
}

/// The writer [`splicing`] hands its encoder: it appends to the thread's buffer.
#[cfg(feature = "server")]
pub(crate) struct SpliceWriter(());

#[cfg(feature = "server")]
impl std::io::Write for SpliceWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        SPLICING.with(|splicing| match splicing.borrow_mut().as_mut() {
            Some(sp) => {
                sp.buf.extend_from_slice(bytes);
                Ok(bytes.len())
            }
            None => Err(std::io::Error::other("a splice writer outside `splicing`")),
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `encode` (a `serde_json` encoder writing to the given writer), in which each
/// large [`Text`] is left out of the output and noted instead, so that an answer
/// holding megabytes of shared text is sent from that text as it goes out rather than
/// from a copy of it (see `server/spliced.rs`). `None` when the encoding failed or when
/// a text was serialized somewhere other than the writer: encode plainly then.
#[cfg(feature = "server")]
pub(crate) fn splicing(encode: impl FnOnce(&mut SpliceWriter) -> std::io::Result<()>) -> Option<Spliced> {
    struct Restore(Option<Spliced>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            SPLICING.with(|splicing| *splicing.borrow_mut() = outer);
        }
    }
    let fresh = Spliced { buf: Vec::with_capacity(1024), texts: Vec::new(), broken: false };
    let restore = Restore(SPLICING.with(|splicing| splicing.replace(Some(fresh))));
    let encoded = encode(&mut SpliceWriter(()));
    let spliced = SPLICING.with(|splicing| splicing.borrow_mut().take());
    drop(restore);
    let spliced = spliced?;
    (encoded.is_ok() && !spliced.broken).then_some(spliced)
}

impl<'de> Deserialize<'de> for Text {
    /// Reads a JSON string into one buffer of its exact length: a string without escapes
    /// is copied once from the request bytes, an escaped one once from the decoder's
    /// scratch space.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text::from(v))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Text, E> {
                Ok(Text::from(v))
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Text, E> {
                std::str::from_utf8(v)
                    .map(Text::from)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Bytes(v), &self))
            }
        }
        d.deserialize_str(V)
    }
}

agentproto_codec::wants!(Text, String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_buffer() {
        let a = Text::from("x".repeat(1 << 20));
        let b = a.clone();
        assert!(Text::ptr_eq(&a, &b));
        assert_eq!(a.as_ptr(), b.as_ptr());
        assert!(!Text::ptr_eq(&a, &Text::from(a.as_str())));
    }

    #[test]
    #[cfg(feature = "server")]
    fn a_large_text_is_escaped_once_and_encodes_to_the_same_bytes() {
        let text = Text::from(format!("{}\"quoted\"\n\u{1}é", "x".repeat(ESCAPE_ONCE_FROM)));
        let two = (text.clone(), vec![text.clone()]);
        let plain = serde_json::to_vec(&serde_json::json!([text.as_str(), [text.as_str()]])).unwrap();
        let once = escaping_once(|| {
            let first = serde_json::to_vec(&two).unwrap();
            let escaped = ESCAPED.with(|escaped| escaped.borrow().as_ref().map(Vec::len));
            assert_eq!(escaped, Some(1), "one escaped copy for the two clones");
            let again = serde_json::to_vec(&text).unwrap();
            (first, again)
        });
        assert_eq!(once.0, plain);
        assert_eq!(once.1, serde_json::to_vec(text.as_str()).unwrap());
        assert!(ESCAPED.with(|escaped| escaped.borrow().is_none()), "dropped after");
        // A text with the same content in another buffer is escaped on its own.
        let other = Text::from(text.as_str());
        let both = escaping_once(|| {
            let bytes = serde_json::to_vec(&(&text, &other)).unwrap();
            (bytes, ESCAPED.with(|escaped| escaped.borrow().as_ref().map(Vec::len)))
        });
        assert_eq!(both.1, Some(2));
        assert_eq!(both.0, serde_json::to_vec(&(text.as_str(), text.as_str())).unwrap());
    }

    #[test]
    fn reads_and_writes_as_a_json_string() {
        let t: Text = serde_json::from_str(r#""caf\u00e9 \"q\"""#).unwrap();
        assert_eq!(t, "café \"q\"");
        assert_eq!(serde_json::to_string(&t).unwrap(), r#""café \"q\"""#);
        let e = serde_json::from_str::<Text>("12").unwrap_err().to_string();
        assert!(e.contains("a string"), "{e}");
    }
}
