"""`python_share.py`: which definitions a Python surface module takes from a base."""

from __future__ import annotations

import unittest

from agentproto_codegen import python_share

BASE_TYPES = '''from msgspec import Struct

__all__ = ["Kind", "Text", "Prompt"]

Kind = str
"""A kind."""


class Text(Struct):
    text: str


class Prompt(Struct):
    prompt: list[Text]
    kind: Kind
'''

# `Prompt` is written alike, but the `Text` it reads is not: it cannot be taken.
UNSTABLE_TYPES = '''from msgspec import Struct

__all__ = ["Kind", "Text", "Prompt", "Extra"]

Kind = str
"""A kind."""


class Text(Struct):
    text: str
    more: int


class Prompt(Struct):
    prompt: list[Text]
    kind: Kind


class Extra(Struct):
    kind: Kind
'''

BASE_DECODE = """from agentproto.acp.generated import base as t


def d_Kind(v, path, cx):
    return v


def d_Text(v, path, cx):
    return t.Text(text=v)
"""

UNSTABLE_DECODE = """from agentproto.acp.generated import unstable as t


def d_Kind(v, path, cx):
    return v


def d_Text(v, path, cx):
    return t.Text(text=v)


DECODERS = {"Kind": d_Kind, "Text": d_Text}
"""


def modules() -> tuple[dict[str, python_share.Module], dict[str, python_share.Module]]:
    types = {
        "base": python_share.parse("pkg.base", BASE_TYPES),
        "unstable": python_share.parse("pkg.unstable", UNSTABLE_TYPES),
    }
    decoders = {
        "base": python_share.parse("pkg._base_decode", BASE_DECODE),
        "unstable": python_share.parse("pkg._unstable_decode", UNSTABLE_DECODE),
    }
    return types, decoders


class ShareTest(unittest.TestCase):
    def test_only_what_reads_the_same_objects_is_taken(self) -> None:
        types, decoders = modules()
        type_sources, decode_sources = python_share.share(types, decoders, {"base": [], "unstable": ["base"]})
        self.assertEqual(type_sources["unstable"], {"Kind": "pkg.base"})
        # `d_Text` is written alike, but builds `t.Text`, which differs: it stays.
        self.assertEqual(decode_sources["unstable"], {"d_Kind": "pkg._base_decode"})

    def test_a_definition_is_imported_from_the_module_that_defines_it(self) -> None:
        types, decoders = modules()
        types["next"] = python_share.parse("pkg.next", UNSTABLE_TYPES)
        bases = {"base": [], "unstable": ["base"], "next": ["unstable"]}
        type_sources, _ = python_share.share(types, {}, bases)
        self.assertEqual(type_sources["next"]["Kind"], "pkg.base")
        self.assertEqual(type_sources["next"]["Extra"], "pkg.unstable")

    def test_the_rewritten_module_imports_what_it_still_needs(self) -> None:
        types, _ = modules()
        text = python_share.rewrite(types["unstable"], {"Kind": "pkg.base"}, python_share.exported(UNSTABLE_TYPES))
        self.assertIn("from pkg.base import Kind\n", text)
        self.assertNotIn('"""A kind."""', text)  # the docstring went with its definition
        self.assertIn("class Prompt(Struct):", text)
        compile(text, "unstable.py", "exec")


if __name__ == "__main__":
    unittest.main()
