"""Pydantic's validation errors in the author's terms: one problem per place, with the JSON path
the author typed and, for an unknown field, the fields allowed there."""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from sitegen.content.strict_json import quote
from sitegen.model.problems import json_path
from sitegen.model.resources import KINDS

_TYPE_NAMES = {
    "int_type": "an integer",
    "float_type": "a number",
    "string_type": "a string",
    "bool_type": "a boolean",
    "dict_type": "an object",
    "list_type": "a list",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def describe_errors(error: ValidationError, document: Any) -> list[tuple[str, str, str]]:
    """One (json path, message, hint) per place, in the author's terms.

    Pydantic puts union member tags into `loc`; walking the document itself tells a key from a
    tag. Several failed union members at one place collapse into one "expected A or B".
    """
    by_place: dict[str, list[Any]] = {}  # pydantic ErrorDetails
    values: dict[str, Any] = {}
    for detail in error.errors(include_url=False, include_context=True):
        location, value, is_key = _locate(detail["loc"], document)
        if detail["type"] == "missing":
            location = (*location, detail["loc"][-1])
        path = json_path(location) + (" (key)" if is_key else "")
        by_place.setdefault(path, []).append(detail)
        values[path] = value
    model = type(_resource_model(document))
    found = []
    for path, details in by_place.items():
        hint = ""
        if details[0]["type"] == "extra_forbidden":
            allowed = _allowed_fields(model, details[0]["loc"][:-1])
            hint = "allowed here: " + ", ".join(allowed) if allowed else ""
        found.append((path, _message(details, values[path]), hint))
    return found


def _resource_model(document: Any) -> Any:
    return KINDS[document["kind"]].model_construct()


def _allowed_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The field names an object at `loc` may hold, found by walking the model's types."""
    current: Any = model
    for step in loc:
        current = _step_into(current, step)
        if current is None:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted(f.alias or name for name, f in current.model_fields.items())
    return []


def _unwrap(annotation: Any) -> Any:
    """`Annotated[X, …]` → X; `X | None` → X (the only non-None member)."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
            continue
        members = [a for a in get_args(annotation) if a is not type(None)]
        if get_origin(annotation) in (Union, UnionType) and len(members) == 1:
            annotation = members[0]
            continue
        return annotation


def _step_into(annotation: Any, step: Any) -> Any:
    current = _unwrap(annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        for name, info in current.model_fields.items():
            if (info.alias or name) == step:
                return info.annotation
        return current if step == current.__name__ else None  # a union tag names the model
    origin = get_origin(current)
    if origin is list and isinstance(step, int):
        return get_args(current)[0]
    if origin is dict and isinstance(step, str):
        return get_args(current)[1]
    return None


def _locate(loc: tuple[Any, ...], document: Any) -> tuple[tuple[str | int, ...], Any, bool]:
    location: list[str | int] = []
    node = document
    for step in loc:
        if step == "[key]":
            return tuple(location), location[-1] if location else None, True
        if isinstance(node, dict) and isinstance(step, str) and step in node:
            node = node[step]
            location.append(step)
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
            location.append(step)
        # anything else is a union tag, or the name of a missing field: not a place in the JSON
    return tuple(location), node, False


def _message(details: list[dict[str, Any]], value: Any) -> str:
    types = [d["type"] for d in details]
    if "missing" in types:
        return "required field is missing"
    if "extra_forbidden" in types:
        return "unknown field"
    expected = [_TYPE_NAMES[t] for t in types if t in _TYPE_NAMES]
    if expected and len(expected) == len(types):
        unique = list(dict.fromkeys(expected))
        if unique == ["an integer", "a number"]:
            unique = ["a number"]
        return f"expected {' or '.join(unique)}, got {describe(value)}"
    # Prefer the most specific failure: a value error beats the type errors of other members.
    specific = [d for d in details if d["type"] not in _TYPE_NAMES] or details
    detail = specific[0]
    kind = detail["type"]
    if kind == "string_pattern_mismatch":
        return f"{quote(value)} does not match {detail['ctx']['pattern']}"
    if kind == "literal_error":
        return f"expected one of {detail['ctx']['expected']}, got {describe(value)}"
    if kind == "value_error":
        return str(detail["ctx"]["error"])
    text = str(detail["msg"]).removeprefix("Value error, ")
    return text[0].lower() + text[1:] if text else kind


def json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null"


def describe(value: Any) -> str:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return f"{json_type(value)} {quote(value)}"
    return json_type(value) if value is not None else "nothing"
