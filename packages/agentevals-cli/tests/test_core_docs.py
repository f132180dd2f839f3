"""``core/_docs.py``: field docstrings reach ``model_json_schema()`` as descriptions, read only when a schema is
asked for (what ``use_attribute_docstrings=True`` gave, without its cost at class creation)."""

from __future__ import annotations

from typing import ClassVar, Optional

from agentevals.core._docs import ATTRIBUTE_DOCS, attribute_docstrings
from pydantic import BaseModel, ConfigDict, Field


class Base(BaseModel):
    model_config = ConfigDict(defer_build=True, **ATTRIBUTE_DOCS)

    name: str
    """The name."""
    weight: float = 1.0
    """Weight of the entry.

    Second paragraph."""


class Entry(Base):
    kind: Optional[str] = Field(default=None, alias="type")
    """What it is."""
    note: str = Field(default="", description="Given in Field.")
    """Not this one."""
    plain: int = 0
    label: ClassVar[str] = "not a field"
    """A class variable's docstring: no property."""


def test_docstrings_are_descriptions_with_aliases_inheritance_and_field_descriptions_first():
    properties = Entry.model_json_schema()["properties"]
    assert properties["name"]["description"] == "The name."  # inherited from Base
    assert properties["weight"]["description"] == "Weight of the entry.\n\nSecond paragraph."  # cleandoc'd
    assert properties["type"]["description"] == "What it is."  # keyed by the alias
    assert properties["note"]["description"] == "Given in Field."
    assert "description" not in properties["plain"]
    assert "label" not in properties
    assert attribute_docstrings(Entry)["kind"] == "What it is."


def test_the_same_schema_as_pydantic_attribute_docstrings():
    class Eager(BaseModel):
        model_config = ConfigDict(use_attribute_docstrings=True)

        name: str
        """The name."""
        kind: Optional[str] = Field(default=None, alias="type")
        """What it is.

        More."""

    class Lazy(BaseModel):
        model_config = ConfigDict(**ATTRIBUTE_DOCS)

        name: str
        """The name."""
        kind: Optional[str] = Field(default=None, alias="type")
        """What it is.

        More."""

    eager, lazy = Eager.model_json_schema(), Lazy.model_json_schema()
    assert lazy["properties"] == eager["properties"]
    assert Lazy.model_fields["name"].description is None  # nothing read at class creation
