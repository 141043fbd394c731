//! The tonic codec of the binding: protobuf bytes out as they were encoded from the
//! typed values, protobuf bytes in read by the generated decoder
//! ([`crate::generated::v1_proto`]) straight into what the receiving side wants: the
//! server a typed [`Request`], the client the answer's ProtoJSON (what its other
//! transports hand it too).

use agentproto_codec::{DecodeError, DecodeErrorKind};
use bytes::Buf as _;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

use super::status;
use crate::errors::{A2aError, ErrorKind, ErrorTable};
use crate::v1::Operation;

/// How the receiving side reads a message of an operation.
pub(crate) type Read<T> = fn(Operation, &[u8]) -> Result<T, DecodeError>;

/// A codec for one call of `op`: sends protobuf bytes, receives `T`s.
pub(crate) struct ProtoCodec<T> {
    op: Operation,
    read: Read<T>,
    table: ErrorTable,
}

impl<T> ProtoCodec<T> {
    /// The codec of a call of `op` whose received messages `read` decodes; refusals
    /// are statuses under `table`.
    pub(crate) fn new(op: Operation, read: Read<T>, table: ErrorTable) -> Self {
        ProtoCodec { op, read, table }
    }
}

impl<T: Send + 'static> Codec for ProtoCodec<T> {
    type Encode = Vec<u8>;
    type Decode = T;
    type Encoder = Bytes;
    type Decoder = Reader<T>;

    fn encoder(&mut self) -> Bytes {
        Bytes
    }

    fn decoder(&mut self) -> Reader<T> {
        Reader { op: self.op, read: self.read, table: self.table }
    }
}

/// Writes a message's protobuf bytes.
pub(crate) struct Bytes;

impl Encoder for Bytes {
    type Item = Vec<u8>;
    type Error = Status;

    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        bytes::BufMut::put_slice(dst, &item);
        Ok(())
    }
}

/// Reads one message with the generated decoder.
pub(crate) struct Reader<T> {
    op: Operation,
    read: Read<T>,
    table: ErrorTable,
}

impl<T: Send + 'static> Decoder for Reader<T> {
    type Item = T;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<T>, Status> {
        let n = src.remaining();
        // tonic hands a whole message in one buffer; should it come in pieces, they are
        // joined first.
        let decoded = if src.chunk().len() == n {
            let out = (self.read)(self.op, src.chunk());
            src.advance(n);
            out
        } else {
            let joined = src.copy_to_bytes(n);
            (self.read)(self.op, &joined)
        };
        decoded.map(Some).map_err(|e| status(&refusal(&e), self.table))
    }
}

/// The A2A error for a message that does not decode: a parse error for bytes that are
/// not a protobuf message, invalid params (with the path and kind) for a message whose
/// values the schema refuses — as on the JSON bindings.
pub(crate) fn refusal(e: &DecodeError) -> A2aError {
    if e.kind == DecodeErrorKind::NotJson {
        A2aError::new(ErrorKind::Parse).with_message(format!("the message is not a valid protobuf message: {e}"))
    } else {
        A2aError::invalid_params(e)
    }
}
