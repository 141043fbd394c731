"""`sharing.py`: which declarations two surfaces have alike, and which surface owns each."""

from __future__ import annotations

import unittest
from dataclasses import replace

from agentproto_codegen import sharing
from agentproto_codegen.model import Alias, ArrayRef, Decl, Enum, Field, NamedRef, PrimRef, Spec, Struct, Union, Variant

STRING = PrimRef("string")


def spec(version: str, surface: str, decls: list[Decl]) -> Spec:
    return Spec("acp", version, surface, "x.json", "00", 1, {d.name: d for d in decls}, [])


ID = Alias("SessionId", STRING, doc="An id.")
TEXT = Struct("Text", [Field("text", STRING, required=True, doc="The text.")], doc="Text.")
BLOCK = Union("Block", "tagged", [Variant("Text", "text", NamedRef("Text"))], tag_field="type")
PROMPT = Struct(
    "Prompt",
    [Field("sessionId", NamedRef("SessionId"), required=True), Field("prompt", ArrayRef(NamedRef("Block")), required=True)],
)
KIND = Enum("Kind", ["read", "edit"], value_docs=["Reads.", "Edits."])
# A runtime type (`RequestId`) is declared by no surface: it is the same everywhere.
CANCEL = Struct("Cancel", [Field("requestId", NamedRef("RequestId"), required=True)])
BASE = [ID, TEXT, BLOCK, PROMPT, KIND, CANCEL]


class SameDeclsTests(unittest.TestCase):
    def test_identical_surfaces_share_everything(self) -> None:
        self.assertEqual(sharing.same_decls(spec("v1", "stable", BASE), spec("v1", "unstable", BASE)), {d.name for d in BASE})

    def test_docs_and_stability_are_not_part_of_the_shape(self) -> None:
        other = [
            replace(TEXT, doc="Other words.", stability="draft", fields=[replace(TEXT.fields[0], doc="", stability="draft")]),
            replace(KIND, value_docs=["", ""], value_stability=["draft", "draft"]),
        ]
        shared = sharing.same_decls(spec("v1", "stable", [TEXT, KIND]), spec("v2", "stable", other))
        self.assertEqual(shared, {"Text", "Kind"})

    def test_with_docs_a_different_doc_is_a_difference(self) -> None:
        other = [replace(TEXT, doc="Other words."), replace(KIND, value_docs=["Reads.", "Writes."]), ID]
        shared = sharing.same_decls(spec("v1", "stable", [TEXT, KIND, ID]), spec("v2", "stable", other), docs=True)
        self.assertEqual(shared, {"SessionId"})

    def test_a_difference_spreads_to_everything_that_refers_to_it(self) -> None:
        # `Text` gains a field: `Block` (its variant) and `Prompt` (a list of blocks) differ too.
        text = replace(TEXT, fields=[*TEXT.fields, Field("lang", STRING, required=False)])
        shared = sharing.same_decls(spec("v1", "stable", BASE), spec("v1", "unstable", [ID, text, BLOCK, PROMPT, KIND, CANCEL]))
        self.assertEqual(shared, {"SessionId", "Kind", "Cancel"})

    def test_an_alias_to_something_else_differs(self) -> None:
        shared = sharing.same_decls(spec("v1", "stable", BASE), spec("v1", "unstable", [replace(ID, target=PrimRef("u32")), *BASE[1:]]))
        self.assertNotIn("Prompt", shared)
        self.assertIn("Block", shared)

    def test_a_name_only_one_side_declares_is_a_difference(self) -> None:
        runtime = Alias("RequestId", STRING)
        shared = sharing.same_decls(spec("v1", "stable", [CANCEL]), spec("v1", "unstable", [CANCEL, runtime]))
        self.assertEqual(shared, set())

    def test_cycles_are_shared_when_every_member_is_alike(self) -> None:
        node = Struct("Node", [Field("children", ArrayRef(NamedRef("Node")), required=True)])
        self.assertEqual(sharing.same_decls(spec("v1", "stable", [node]), spec("v1", "unstable", [node])), {"Node"})
        tree = Struct("Tree", [Field("root", NamedRef("Leaf"), required=True)])
        leaf = Struct("Leaf", [Field("up", NamedRef("Tree"), required=False)])
        leaf2 = replace(leaf, fields=[*leaf.fields, Field("x", STRING, required=False)])
        self.assertEqual(sharing.same_decls(spec("v1", "stable", [tree, leaf]), spec("v1", "unstable", [tree, leaf2])), set())

    def test_a_flattened_union_is_a_reference(self) -> None:
        holder = Struct("Holder", [], flatten="Block")
        block2 = replace(BLOCK, variants=[*BLOCK.variants, Variant("Gone", "gone", None)])
        shared = sharing.same_decls(spec("v1", "stable", [holder, BLOCK, TEXT]), spec("v1", "unstable", [holder, block2, TEXT]))
        self.assertEqual(shared, {"Text"})


class OwnersTests(unittest.TestCase):
    def test_each_declaration_goes_to_the_first_base_that_shares_it_and_on_to_its_owner(self) -> None:
        text2 = replace(TEXT, fields=[*TEXT.fields, Field("lang", STRING, required=False)])
        specs = {
            ("v1", "stable"): spec("v1", "stable", BASE),
            ("v1", "unstable"): spec("v1", "unstable", [*BASE, Struct("Extra", [])]),
            ("v2", "stable"): spec("v2", "stable", [ID, text2, BLOCK, KIND]),
            ("v2", "unstable"): spec("v2", "unstable", [ID, text2, BLOCK, KIND, Struct("Extra", [])]),
        }
        owners = sharing.owners(specs, sharing.ACP_BASES)
        v1, v1u, v2, v2u = specs
        self.assertEqual(set(owners[v1].values()), {v1})
        self.assertEqual(owners[v1u], {**{d.name: v1 for d in BASE}, "Extra": v1u})
        self.assertEqual(owners[v2], {"SessionId": v1, "Text": v2, "Block": v2, "Kind": v1})
        # From v2 first (Text, Block, and what v2 took from v1), then v1 unstable (Extra).
        self.assertEqual(owners[v2u], {"SessionId": v1, "Text": v2, "Block": v2, "Kind": v1, "Extra": v1u})

    def test_bases_that_form_a_cycle_are_refused(self) -> None:
        specs = {("v1", "stable"): spec("v1", "stable", BASE), ("v1", "unstable"): spec("v1", "unstable", BASE)}
        bases = {("v1", "stable"): [("v1", "unstable")], ("v1", "unstable"): [("v1", "stable")]}
        with self.assertRaises(ValueError):
            sharing.owners(specs, bases)

    def test_a_missing_base_is_skipped(self) -> None:
        specs = {("v2", "unstable"): spec("v2", "unstable", BASE)}
        owners = sharing.owners(specs, sharing.ACP_BASES)
        self.assertEqual(set(owners[("v2", "unstable")].values()), {("v2", "unstable")})


if __name__ == "__main__":
    unittest.main()
