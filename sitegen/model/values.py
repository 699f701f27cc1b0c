"""The shared value rules of the format (FORMAT.md §1): names, tokens, digests, instants,
https URLs, durations, set-like lists, derived-axis expressions, and the strict base model.

Like resources.py, this module does not postpone its annotations: pydantic would evaluate each
string again when it builds the models, at every start.
"""

import re
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
)
from pydantic.alias_generators import to_camel

NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
TOKEN_PATTERN = r"^[a-z][a-z0-9_]*$"
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]*$"
DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"
INSTANT_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$"
COMMIT_PATTERN = r"^[0-9a-f]{7,64}$"

# Free text has limits too: content comes from strangers' pull requests.
ShortText = Annotated[str, StringConstraints(min_length=1, max_length=200)]
LongText = Annotated[str, StringConstraints(min_length=1, max_length=2000)]
Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN, max_length=200)]
Token = Annotated[str, StringConstraints(pattern=TOKEN_PATTERN, max_length=100)]
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=100)]
Digest = Annotated[str, StringConstraints(pattern=DIGEST_PATTERN)]
Commit = Annotated[str, StringConstraints(pattern=COMMIT_PATTERN)]
PositiveInt = Annotated[int, Field(ge=1)]
NonNegativeInt = Annotated[int, Field(ge=0)]
# Constraints on each arm, not on the union: pydantic-core checks them natively, and the JSON
# Schema says `minimum` (on a union it leaks pydantic's own `"ge": 0`, which no reader knows).
FiniteNumber = int | Annotated[float, Field(allow_inf_nan=False)]
NonNegativeNumber = Annotated[int, Field(ge=0)] | Annotated[float, Field(ge=0, allow_inf_nan=False)]


def _check_instant(value: str) -> str:
    # The pattern fixes the shape; parsing catches impossible dates like 2025-02-30.
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as error:
        raise ValueError(f"not a real date and time: {value!r}") from error
    return value


Instant = Annotated[str, StringConstraints(pattern=INSTANT_PATTERN), AfterValidator(_check_instant)]


def _check_https(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme != "https" or not parts.hostname or any(c.isspace() for c in value):
        raise ValueError(f"not an https URL: {value!r}")
    return value


Url = Annotated[str, StringConstraints(max_length=2000), AfterValidator(_check_https)]

_DURATION_TEXT = re.compile(r"^(\d+(?:\.\d+)?) ?(ns|us|µs|ms|s)$")
_NS_PER_UNIT = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _normalise_duration(value: Any) -> Any:
    """Authoring may write `"0.008 ms"`; identity always sees whole nanoseconds (`8000`)."""
    if not isinstance(value, str):
        return value
    match = _DURATION_TEXT.match(value)
    if not match:
        raise ValueError(f"not a duration: {value!r} (write integer nanoseconds or e.g. '0.5 ms')")
    try:
        nanoseconds = Decimal(match.group(1)) * _NS_PER_UNIT[match.group(2)]
    except InvalidOperation as error:  # pragma: no cover - the pattern admits only decimals
        raise ValueError(f"not a duration: {value!r}") from error
    if nanoseconds != nanoseconds.to_integral_value():
        raise ValueError(f"{value!r} is not a whole number of nanoseconds")
    return int(nanoseconds)


Duration = Annotated[NonNegativeInt, BeforeValidator(_normalise_duration)]


def _sorted_set(values: list[Any]) -> list[Any]:
    """Set-like lists are hashed sorted and de-duplicated (FORMAT.md §2)."""
    return sorted(set(values))


TokenSet = Annotated[list[Token], AfterValidator(_sorted_set)]
TextSet = Annotated[list[ShortText], AfterValidator(_sorted_set)]


class Model(BaseModel):
    """Strict, closed, camelCase on the wire."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
        hide_input_in_errors=True,
    )


_EXPRESSION_TOKEN = re.compile(r"\s*(?:(\d+)|([a-z][a-z0-9_]*)|(//|[-+*%()]))")


def check_expression(text: str) -> str:
    """The derived-axis grammar: integers, axis names, `+ - * % //`, parentheses."""
    position, depth, expect_operand = 0, 0, True
    text_end = len(text.rstrip())
    while position < text_end:
        match = _EXPRESSION_TOKEN.match(text, position)
        if not match:
            raise ValueError(f"unexpected character at {position + 1} in expression {text!r}")
        number, name, symbol = match.groups()
        position = match.end()
        if number or name:
            if not expect_operand:
                raise ValueError(f"missing operator before {match.group().strip()!r}")
            expect_operand = False
        elif symbol == "(":
            if not expect_operand:
                raise ValueError("missing operator before '('")
            depth += 1
        elif symbol == ")":
            if expect_operand or depth == 0:
                raise ValueError(f"unbalanced ')' in expression {text!r}")
            depth -= 1
        else:
            if expect_operand:
                raise ValueError(f"missing operand before {symbol!r}")
            expect_operand = True
    if expect_operand or depth:
        raise ValueError(f"incomplete expression {text!r}")
    return text


Expression = Annotated[
    str, StringConstraints(min_length=1, max_length=200), AfterValidator(check_expression)
]
