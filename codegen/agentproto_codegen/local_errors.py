"""The local errors of an ACP connection (`[[local_errors]]` in rules/acp.toml), read
into one table and emitted as each SDK's `AcpError` family: Rust's enum, the Python and
TypeScript class hierarchies. What a kind carries, the text it renders and what a
handler answers when it lets one escape are written once, in the rules file.

A message template names fields as `{field}`, or parts of an error object as
`{field.code}` / `{field.message}`; each emitter turns it into its language's
formatting (a `thiserror` attribute, an f-string, a template literal).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Any

from .emit import rust_str, table_header

TYPES = ("string", "int", "version", "error-object", "call-error", "decode-error")
PARTS = {"code", "message"}  # the parts of an error object a message may name

RUST_OUT = "crates/acp/src/generated/acp_error.rs"
PYTHON_OUT = "python/src/agentproto/acp/generated/errors.py"
TS_OUT = "ts/src/generated/acp/errors.ts"


@dataclass(frozen=True)
class Field:
    name: str  # Python and TypeScript
    rust: str  # Rust
    type: str
    doc: str


@dataclass(frozen=True)
class Kind:
    variant: str  # Rust's variant, the name flow vectors use
    cls: str  # the Python / TypeScript class
    doc: str
    fields: list[Field]
    message: str
    handler_code: int
    cause: str | None  # the field whose error object is reported as `data.cause`

    @property
    def method(self) -> Field | None:
        return next((f for f in self.fields if f.name == "method"), None)


class LocalErrorsError(Exception):
    pass


def read(rules: dict[str, Any], source: tuple[str, str]) -> tuple[list[Kind], tuple[str, str]]:
    """The kinds of `rules` (the parsed rules file), checked; `source` is (file, sha256)."""
    kinds = []
    for i, row in enumerate(rules.get("local_errors", [])):
        where = f"rules/acp.toml local_errors[{i}]"
        fields = []
        for f in row.get("fields", []):
            if f.get("type") not in TYPES:
                raise LocalErrorsError(f"{where}: field {f.get('name')!r} has type {f.get('type')!r}, not one of {TYPES}")
            fields.append(Field(f["name"], f.get("rust", f["name"]), f["type"], f.get("doc", "")))
        names = {f.name: f for f in fields}
        for ref, part in re.findall(r"\{([a-z_]+)(?:\.([a-z_]+))?\}", row["message"]):
            if ref not in names:
                raise LocalErrorsError(f"{where}: the message names `{ref}`, which is not a field")
            if part and (names[ref].type != "error-object" or part not in PARTS):
                raise LocalErrorsError(f"{where}: `{ref}.{part}` is not a part of an error object")
        cause = row.get("cause")
        if cause is not None and names.get(cause, Field("", "", "", "")).type != "error-object":
            raise LocalErrorsError(f"{where}: cause `{cause}` is not an error-object field")
        kinds.append(
            Kind(row["variant"], row.get("class", row["variant"]), row["doc"], fields, row["message"],
                 int(row.get("handler_code", -32603)), cause)
        )
    if not kinds:
        raise LocalErrorsError("rules/acp.toml has no [[local_errors]]")
    return kinds, source


def _pieces(message: str) -> list[tuple[str, str | None, str | None]]:
    """The template as (text, field, part) pieces: literal text, then the reference after it."""
    out = []
    pos = 0
    for m in re.finditer(r"\{([a-z_]+)(?:\.([a-z_]+))?\}", message):
        out.append((message[pos : m.start()], m.group(1), m.group(2)))
        pos = m.end()
    out.append((message[pos:], None, None))
    return out


# -- Rust ------------------------------------------------------------------------

RUST_TYPES = {
    "string": "String",
    "int": "i64",
    "version": "u16",
    "error-object": "ErrorObject",
    "call-error": "Arc<CallError>",
    "decode-error": "Box<DecodeError>",
}


def rust(kinds: list[Kind], source: tuple[str, str]) -> str:
    lines = table_header(source, "//")
    lines += [
        "//! The local failures of a typed call or notification (`AcpError`), generated from",
        "//! the `[[local_errors]]` table of the rules file.",
        "",
        "use std::sync::Arc;",
        "",
        "use agentproto_codec::DecodeError;",
        "use agentproto_jsonrpc::{CallError, ErrorCode, ErrorObject};",
        "",
        "/// A local failure of a typed call or notification. The peer's own error answer",
        "/// is [`AcpError::Rpc`]; everything else happened on this side.",
        "#[derive(Debug, Clone, thiserror::Error)]",
        "#[non_exhaustive]",
        "pub enum AcpError {",
    ]
    for k in kinds:
        fmt, args = "", []
        by_name = {f.name: f for f in k.fields}
        for text, ref, part in _pieces(k.message):
            fmt += text.replace("{", "{{").replace("}", "}}")
            if ref is None:
                continue
            if part is None:
                fmt += "{" + by_name[ref].rust + "}"
            else:
                fmt += "{}"
                args.append(f".{by_name[ref].rust}.{part}")
        attr = ", ".join([rust_str(fmt), *args])
        lines.append(f"    /// {k.doc}")
        lines.append(f"    #[error({attr})]")
        lines.append(f"    {k.variant} {{")
        for f in k.fields:
            lines.append(f"        /// {f.doc}")
            lines.append(f"        {f.rust}: {RUST_TYPES[f.type]},")
        lines.append("    },")
    lines += ["}", "", "impl AcpError {"]
    lines += [
        "    /// The name of this kind of failure (the flow vectors name outcomes by it).",
        "    pub fn variant(&self) -> &'static str {",
        "        match self {",
    ]
    lines += [f"            AcpError::{k.variant} {{ .. }} => {rust_str(k.variant)}," for k in kinds]
    lines += ["        }", "    }", ""]
    lines += [
        "    /// The method called, where one is to blame.",
        "    pub fn method(&self) -> Option<&str> {",
        "        match self {",
    ]
    with_method = [k for k in kinds if k.method is not None]
    without = [k for k in kinds if k.method is None]
    if with_method:
        lines.append("            " + " | ".join(f"AcpError::{k.variant} {{ method, .. }}" for k in with_method) + " => Some(method),")
    if without:
        lines.append("            " + " | ".join(f"AcpError::{k.variant} {{ .. }}" for k in without) + " => None,")
    lines += ["        }", "    }", ""]
    lines += [
        "    /// The code a handler answers with when it lets this error escape.",
        "    pub fn handler_code(&self) -> ErrorCode {",
        "        match self {",
    ]
    special = [k for k in kinds if k.handler_code != -32603]
    for k in special:
        lines.append(f"            AcpError::{k.variant} {{ .. }} => ErrorCode({k.handler_code}),")
    lines += ["            _ => ErrorCode(-32603),", "        }", "    }", ""]
    lines += [
        "    /// The peer's error object this failure reports as the cause of a handler's answer.",
        "    pub fn cause(&self) -> Option<&ErrorObject> {",
        "        match self {",
    ]
    for k in kinds:
        if k.cause:
            field = next(f for f in k.fields if f.name == k.cause)
            lines.append(f"            AcpError::{k.variant} {{ {field.rust}, .. }} => Some({field.rust}),")
    lines += ["            _ => None,", "        }", "    }", "}", ""]
    return "\n".join(lines)


# -- TypeScript --------------------------------------------------------------------

TS_TYPES = {
    "string": "string",
    "int": "number",
    "version": "number",
    "error-object": "ErrorObject",
    "call-error": "CallError",
    "decode-error": "DecodeError",
}


def _ts_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("`", "\\`").replace("${", "\\${")


def typescript(kinds: list[Kind], source: tuple[str, str]) -> str:
    lines = table_header(source, "//")
    lines += [
        "/**",
        " * `AcpError`: how a typed call or notification failed, generated from the",
        " * `[[local_errors]]` table of the rules file. The peer's own error answer is",
        " * `PeerError`; every other class happened on this side. `variant` is the kind's name in",
        " * every SDK (the flow vectors name outcomes by it). A handler that lets one escape",
        " * answers `handlerCode` (-32603 unless the table says otherwise) naming the call",
        " * (`data.method`) and, for a peer error, its `code` and `message` (`data.cause`): the",
        " * peer's code is never passed on as the handler's own.",
        " */",
        "",
        'import type { DecodeError } from "../../codec/errors.js";',
        'import { encodeString, RawJson } from "../../codec/values.js";',
        'import type { ErrorObject } from "../../jsonrpc/error.js";',
        'import type { CallError } from "../../jsonrpc/local-error.js";',
        "",
        "export abstract class AcpError extends Error {",
        "  /** The kind of failure, as every SDK names it. */",
        "  abstract readonly variant: string;",
        "  /** The code a handler answers with when it lets this error escape. */",
        "  readonly handlerCode: number = -32603;",
        "",
        "  constructor(",
        "    /** The method called (`null` where no single method is to blame). */",
        "    readonly method: string | null,",
        "    message: string,",
        "  ) {",
        "    super(message);",
        "  }",
        "",
        "  /** The peer's error object reported as the cause, if this failure has one. */",
        "  causeObject(): ErrorObject | null {",
        "    return null;",
        "  }",
        "",
        "  /** The answer of a handler that failed with this error. */",
        "  toErrorObject(): ErrorObject {",
        '    let data = `{"method":${this.method === null ? "null" : encodeString(this.method)}`;',
        "    const cause = this.causeObject();",
        '    if (cause !== null) data += `,"cause":{"code":${cause.code},"message":${encodeString(cause.message)}}`;',
        '    return { code: this.handlerCode, message: this.message, data: new RawJson(data + "}") };',
        "  }",
        "}",
        "",
    ]
    for k in kinds:
        by_name = {f.name: f for f in k.fields}
        text = ""
        for piece, ref, part in _pieces(k.message):
            text += _ts_text(piece)
            if ref is None:
                continue
            f = by_name[ref]
            if part is not None:
                text += "${" + f"{ref}.{part}" + "}"
            elif f.type in ("call-error", "decode-error"):
                text += "${" + f"{ref}.message" + "}"
            else:
                text += "${" + ref + "}"
        params = []
        for f in k.fields:
            if f.name == "method":
                params.append(f"method: {TS_TYPES[f.type]}")
            else:
                override = "override " if f.name == "cause" else ""
                params.append(f"/** {f.doc} */ {override}readonly {f.name}: {TS_TYPES[f.type]}")
        lines.append(f"/** {k.doc} */")
        lines.append(f"export class {k.cls} extends AcpError {{")
        lines.append(f"  readonly variant = {rust_str(k.variant)};")
        lines.append(f"  override name = {rust_str(k.cls)};")
        if k.handler_code != -32603:
            lines.append(f"  override readonly handlerCode: number = {k.handler_code};")
        lines.append(f"  constructor({', '.join(params)}) {{")
        method = "method" if k.method is not None else "null"
        lines.append(f"    super({method}, `{text}`);")
        lines.append("  }")
        if k.cause:
            lines.append("  override causeObject(): ErrorObject | null {")
            lines.append(f"    return this.{k.cause};")
            lines.append("  }")
        lines.append("}")
        lines.append("")
    return "\n".join(lines)


# -- Python ------------------------------------------------------------------------

PY_TYPES = {
    "string": "str",
    "int": "int",
    "version": "int",
    "error-object": "ErrorObject",
    "call-error": "CallError",
    "decode-error": "DecodeError",
}


PY_LINE = 120  # python/pyproject.toml's line length


def _py_doc(doc: str, indent: str) -> list[str]:
    """A docstring wrapped to the line length."""
    words = textwrap.wrap(doc, PY_LINE - len(indent) - 6)
    if len(words) == 1:
        return [f'{indent}"""{words[0]}"""']
    return [f'{indent}"""{words[0]}', *(f"{indent}{w}" for w in words[1:-1]), f'{indent}{words[-1]}"""']


def _py_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("{", "{{").replace("}", "}}")


def python(kinds: list[Kind], source: tuple[str, str]) -> str:
    names = ["AcpError", *sorted(k.cls for k in kinds)]
    lines = table_header(source, "#")
    lines += [
        '"""`AcpError`: how a typed call or notification failed, generated from the',
        "`[[local_errors]]` table of the rules file.",
        "",
        "The peer's own error answer is `PeerError`; every other class happened on this side.",
        "`variant` is the kind's name in every SDK (the flow vectors name outcomes by it). A",
        "handler that lets one escape answers `handler_code` (-32603 unless the table says",
        "otherwise) naming the call (`data.method`) and, for a peer error, its `code` and",
        "`message` (`data.cause`): the peer's code is never passed on as the handler's own.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import ClassVar",
        "",
        "import msgspec",
        "",
        "from agentproto.codec.errors import DecodeError",
        "from agentproto.errors import AgentprotoError",
        "from agentproto.jsonrpc.error import ErrorObject",
        "from agentproto.jsonrpc.local_error import CallError",
        "",
        "__all__ = [",
        *[f'    "{n}",' for n in names],
        "]",
        "",
        "_encode = msgspec.json.Encoder().encode",
        "",
        "",
        "class AcpError(AgentprotoError):",
        '    """A typed call or notification failed."""',
        "",
        '    variant: ClassVar[str] = ""',
        '    """The kind of failure, as every SDK names it."""',
        "    handler_code: ClassVar[int] = -32603",
        '    """The code a handler answers with when it lets this error escape."""',
        "",
        "    def __init__(self, method: str | None, message: str) -> None:",
        "        super().__init__(message)",
        "        self.method = method",
        '        """The method called (`None` where no single method is to blame)."""',
        "",
        "    def cause_object(self) -> ErrorObject | None:",
        '        """The peer\'s error object reported as the cause, if this failure has one."""',
        "        return None",
        "",
        "    def to_error_object(self) -> ErrorObject:",
        '        """The answer of a handler that failed with this error."""',
        "        data = b'{\"method\":' + _encode(self.method)",
        "        cause = self.cause_object()",
        "        if cause is not None:",
        "            data += b',\"cause\":{\"code\":' + _encode(cause.code) + b',\"message\":' + _encode(cause.message) + b\"}\"",
        '        return ErrorObject(code=self.handler_code, message=str(self), data=msgspec.Raw(data + b"}"))',
        "",
    ]
    for k in kinds:
        text = ""
        for piece, ref, part in _pieces(k.message):
            text += _py_text(piece)
            if ref is not None:
                text += "{" + (f"{ref}.{part}" if part else ref) + "}"
        params = ", ".join(f"{f.name}: {PY_TYPES[f.type]}" for f in k.fields)
        lines += ["", f"class {k.cls}(AcpError):", *_py_doc(k.doc, "    "), "", f'    variant = "{k.variant}"']
        if k.handler_code != -32603:
            lines.append(f"    handler_code = {k.handler_code}")
        lines += ["", f"    def __init__(self, {params}) -> None:"]
        method = "method" if k.method is not None else "None"
        call = f'        super().__init__({method}, f"{text}")'
        if len(call) <= PY_LINE:
            lines.append(call)
        else:  # as `ruff format` wraps it
            lines += ["        super().__init__(", f'            {method}, f"{text}"', "        )"]
        for f in k.fields:
            if f.name == "method":
                continue
            lines.append(f"        self.{f.name} = {f.name}")
            lines += _py_doc(f.doc, "        ")
        if k.cause:
            lines += ["", "    def cause_object(self) -> ErrorObject | None:", f"        return self.{k.cause}"]
        lines.append("")
    return "\n".join(lines)
