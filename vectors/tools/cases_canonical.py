"""Cases whose point is the canonical encoding (vectors/acp/v1/types/canonical/).

Every decoded case has a golden file; these add inputs that a canonical encoder must
normalise or keep: member order, string escapes, double spellings, unknown variants
whose tag is not first, maps, and free-form values with whitespace and escapes inside.
Their inputs are written as exact text (`input_text`) so the spelling is the point.
"""

from __future__ import annotations

from vectorlib import *  # noqa: F403
from fixtures import *  # noqa: F403

F = "acp/v1/types/canonical"
R = "acp.v1.encoding.canonical"

REQUIREMENTS[R] = {
    "source": "sdk: vectors/README.md, Canonical encoding",
    "text": "A decoded params or result object is encoded canonically: members in schema order, "
            "serde_json's number and string spellings, free-form values and unknown variants kept as received.",
}


def line(payload: str, *, method: str | None = None, id: int | None = 1, result: bool = False) -> str:
    if result:
        return '{"jsonrpc":"2.0","id":3,"result":' + payload + "}\n"
    head = '{"jsonrpc":"2.0",' + ("" if id is None else f'"id":{id},') + f'"method":"{method}"'
    return head + ',"params":' + payload + "}\n"


def build_canonical():
    PR = "session/prompt"
    case(f"{F}/member-order", R,
         "A prompt request whose members arrive in reverse order re-encodes them in schema order.",
         x_request(PR, 1, "PromptRequest", prompt(TEXT_MIN)),
         input_text=line('{"prompt":[{"text":"Hello","type":"text"}],"sessionId":"sess_1"}', method=PR))

    text = "a/b é 😀 \x01 \x1f \x7f \t\n\r\b\f \" \\ \u2028"
    case(f"{F}/string-escapes", R,
         "A text block spelled with every kind of escape re-encodes with only `\"`, `\\\\` and control characters "
         "escaped (short forms where JSON has them, else lower-case `\\u00XX`).",
         x_request(PR, 1, "PromptRequest", prompt({"type": "text", "text": text})),
         input_text=line('{"sessionId":"sess_1","prompt":[{"type":"text","text":'
                         r'"a\/b \u00e9 \ud83d\ude00 \u0001 \u001F ' "\x7f" r' \t\n\r\b\f \" \\ \u2028"}]}', method=PR))

    spellings = ["1", "1.0", "1E2", "0.1", "-0", "1e21", "0.000001", "0.00001", "2.5e-8", "123456789012345678"]
    values = [1.0, 1.0, 100.0, 0.1, -0.0, 1e21, 1e-06, 1e-05, 2.5e-08, 1.2345678901234568e17]
    blocks = ",".join('{"type":"text","text":"t","annotations":{"priority":%s}}' % s for s in spellings)
    case(f"{F}/double-spellings", R,
         "Doubles (annotations.priority) spelled as integers, with exponents, as -0 or beyond 2^53 re-encode in "
         "serde_json's shortest form (`1.0`, `100.0`, `-0.0`, `1e+21`, `1e-6`, `0.00001`, `1.2345678901234568e+17`).",
         x_request(PR, 1, "PromptRequest",
                   prompt(*({"type": "text", "text": "t", "annotations": {"priority": v}} for v in values))),
         input_text=line('{"sessionId":"sess_1","prompt":[' + blocks + "]}", method=PR))

    SU, SN = "session/update", "SessionNotification"
    unknown = '{"data":{ "a" : [1, 2] },"type":"vid\\u0065o","\\u0063aption":"\\u00e9"}'
    case(f"{F}/unknown-variant-tag-not-first", R,
         "An unknown content block whose tag comes after other members re-encodes with the tag first, then the other "
         "members in received order; keys and the tag value are re-spelled canonically, member values kept as received.",
         x_notification(SU, SN, upd({"sessionUpdate": "agent_message_chunk",
                                     "content": {"data": {"a": [1, 2]}, "type": "video", "caption": "é"}}),
                        ["$.params.update.content"]),
         input_text=line('{"sessionId":"sess_1","update":{"content":' + unknown
                         + ',"sessionUpdate":"agent_message_chunk"}}', method=SU, id=None),
         direction=A2C)

    option = '{"min":0,"id":"temp","type":"slider","_meta":{ "k" : 1 },"name":"T"}'
    case(f"{F}/unknown-variant-flattened", R,
         "A config option of unknown type re-encodes its common members first in schema order, then the tag, then the "
         "remaining received members in their order.",
         x_response(3, "session/new", "NewSessionResponse",
                    {"sessionId": SID, "configOptions": [{"id": "temp", "name": "T", "_meta": {"k": 1},
                                                          "type": "slider", "min": 0}]},
                    ["$.result.configOptions[0]"]),
         input_text=line('{"configOptions":[' + option + '],"sessionId":"sess_1"}', result=True),
         direction=A2C, pending=pend(3, "session/new"))

    case(f"{F}/map-order-and-values", R,
         "An elicitation answer keeps its content keys in received order (escaped keys written plainly) and writes each "
         "value as the first variant it fits: 1 an integer, 1.50 and 1e2 doubles.",
         x_response(3, "elicitation/create", "CreateElicitationResponse",
                    {"action": "accept", "content": {"z": 1, "a": 1.5, "é": 100.0, "s": "\u00e9"}}),
         input_text=line('{"content":{"z":1,"a":1.50,"\\u00e9":1e2,"s":"\\u00e9"},"action":"accept"}', result=True),
         direction=C2A, pending=pend(3, "elicitation/create"))

    raw_in = '[ 1.50 , "\\u0041" , {"b" :1,"a":2} ]'
    meta = '{ "b" : 1.0E+2, "a" : "\\/\\u00e9" }'
    case(f"{F}/free-form-verbatim", R,
         "Free-form values (`rawInput`, `_meta`) are re-encoded exactly as received: whitespace, number spellings, "
         "escapes and member order.",
         x_notification(SU, SN, upd({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t",
                                     "rawInput": [1.5, "A", {"b": 1, "a": 2}]}, _meta={"b": 100.0, "a": "/é"})),
         input_text=line('{"_meta":' + meta + ',"update":{"rawInput":' + raw_in
                         + ',"title":"t","toolCallId":"c","sessionUpdate":"tool_call"},"sessionId":"sess_1"}',
                         method=SU, id=None),
         direction=A2C)

    case(f"{F}/extension-params-verbatim", R,
         "The params of an extension request are re-encoded exactly as received, whitespace included.",
         x_request("_test/echo", 1, None, {"x": 1.0, "y": "é"}),
         input_text=line('{ "x" : 1.0 , "y":"\\u00e9" }', method="_test/echo"))
