/** The codec runtime: the strict reader, decode errors and warnings, and the value types
 * generated code is made of (`agentproto/codec`). */

export { DecodeError, type Decoded, type DecodeWarning, type WarningKind } from "./errors.js";
export { DECODE_ERROR_KINDS, type DecodeErrorKind } from "./kind.js";
export { JArray, JMember, JNumber, JObject, JsonSyntaxError, MAX_NESTING_DEPTH, parse, type JNode } from "./reader.js";
export {
  encodeDouble,
  encodeInteger,
  encodeString,
  RawJson,
  ReceivedJson,
  UnknownVariant,
  type Int64,
  type Unknown,
} from "./values.js";
