"""An index's parameters, a frozen dataclass per kind, and their form in a stored index's header (a JSON
object with the field names as keys). A field that has a default and holds it is not written, so a header
holds what the build chose and nothing more, and a header without such a field reads as its default."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, TypeVar


class Params(Protocol):
    """What every kind's parameters have: the genome segments' bounds (empty: one piece)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def segments(self) -> tuple[int, ...]: ...


P = TypeVar("P", bound=Params)


def to_header(params: Params) -> dict[str, Any]:
    """The header's form of params: its fields without a default and those that differ from it, tuples as lists."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        if f.metadata.get("stored", True) and (f.default is dataclasses.MISSING or value != f.default):
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def from_header(cls: type[P], header: Mapping[str, Any]) -> P:
    """params of kind cls from a header's form (fields it lacks take their defaults; a key it does not know, as a
    newer seedmap might write, is left). KeyError when it lacks a field that has no default."""
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in header:
            value = header[f.name]
            kwargs[f.name] = tuple(int(v) for v in value) if isinstance(value, list) else value
        elif f.default is dataclasses.MISSING:
            raise KeyError(f.name)
    return cls(**kwargs)


def not_stored() -> Any:
    """A field the build uses but the header does not keep (it changes nothing in the index)."""
    return dataclasses.field(default=(), metadata={"stored": False})
