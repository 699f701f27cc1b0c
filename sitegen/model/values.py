"""The shared value rules of the format (FORMAT.md §1): names, tokens, digests, instants,
https URLs, durations, free text, set-like lists, derived-axis expressions, the limits on how
much one resource may hold, and the strict base model.

Like resources.py, this module does not postpone its annotations: pydantic would evaluate each
string again when it builds the models, at every start.
"""

import functools
import os
import re
import time
from datetime import UTC, datetime, timedelta
from fractions import Fraction
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

from sitegen.model.text import check_line, check_text

NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
TOKEN_PATTERN = r"^[a-z][a-z0-9_]*$"
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]*$"
DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"
INSTANT_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$"
COMMIT_PATTERN = r"^[0-9a-f]{7,64}$"
MAX_SAFE_INTEGER = 2**53 - 1  # the largest integer every JSON reader holds exactly

# How much one resource may hold (docs/checking.md): every count a page, a chart or a check
# iterates over is bounded, so that no file near the size limit can take the build's memory.
MAX_AXES = 64  # an operation's or a workload's axes, an implementation's support.axes
MAX_TENSORS = 64  # an operation's inputs and outputs; a workload's tensors and scalars
MAX_RANK = 16  # dimensions of a shape, entries of strides
MAX_LABELS = 64
MAX_ITEMS = 256  # every other list or map: authors, measurements, libraries, settings …
MAX_SAMPLES = 100_000  # timing.rawSamples
# A measurement is 0 or within these magnitudes, so that the ratio of any two is a finite
# double (a page divides each value by the cohort's best and its baseline).
MIN_MAGNITUDE = 1e-100
MAX_MAGNITUDE = 1e100


def at_most(limit: int, what: str) -> BeforeValidator:
    """A list or map of at most `limit` items: checked before its items, so one problem, not
    one per item."""

    def check(value: Any) -> Any:
        if isinstance(value, list | dict) and len(value) > limit:
            raise ValueError(f"{len(value):,} {what}, over the limit of {limit:,}")
        return value

    return BeforeValidator(check)


# --- free text ---------------------------------------------------------------------------------

# What no text may hold, and why: model/text.py (check_line, check_text).

# Free text has limits too: content comes from strangers' pull requests.
ShortText = Annotated[
    str, StringConstraints(min_length=1, max_length=200), AfterValidator(check_line)
]
LongText = Annotated[
    str, StringConstraints(min_length=1, max_length=2000), AfterValidator(check_text)
]
Line = Annotated[str, StringConstraints(max_length=200), AfterValidator(check_line)]  # may be ""
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


class EpochError(ValueError):
    """SOURCE_DATE_EPOCH holds something that is not a time a build can have."""


def source_date(value: str | None) -> datetime | None:
    """The build's date from SOURCE_DATE_EPOCH (whole seconds since 1970, ASCII digits), or None
    when it is unset or empty; EpochError for anything else."""
    if value is None or value == "":
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 12:
        raise EpochError(
            f"SOURCE_DATE_EPOCH: not a whole number of seconds since 1970: {value[:40]!r}"
        )
    try:
        return datetime.fromtimestamp(int(value), tz=UTC)
    except (OverflowError, OSError, ValueError) as error:
        raise EpochError(f"SOURCE_DATE_EPOCH: out of range: {value!r}") from error


# A run observed more than this after the build's own date is refused: it would take over its
# cell from the real newest run.
FUTURE_TOLERANCE = timedelta(days=1)


def latest_instant() -> datetime:
    """The latest instant content may hold: a day after SOURCE_DATE_EPOCH, else after now."""
    return _latest_instant(os.environ.get("SOURCE_DATE_EPOCH"), int(time.time()) // 3600)


@functools.lru_cache(maxsize=4)
def _latest_instant(epoch: str | None, hour: int) -> datetime:
    try:
        reference = source_date(epoch)
    except EpochError:  # the commands refuse it before reading content (pipeline.py)
        reference = None
    if reference is None:
        reference = datetime.fromtimestamp(hour * 3600 + 3600, tz=UTC)
    latest = datetime.max.replace(tzinfo=UTC)  # a SOURCE_DATE_EPOCH in 9999's last day: no later
    return reference + FUTURE_TOLERANCE if reference < latest - FUTURE_TOLERANCE else latest


def _check_instant(value: str) -> str:
    # The pattern fixes the shape (its `\d` is ASCII in JSON Schema, any script's digit in
    # pydantic's engine); parsing catches impossible dates like 2025-02-30.
    if not value.isascii():
        raise ValueError(f"not a date and time in ASCII digits: {value!r}")
    try:
        instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as error:
        raise ValueError(f"not a real date and time: {value!r}") from error
    if instant > latest_instant():
        raise ValueError(f"{value!r} is more than a day after the build's date")
    return value


Instant = Annotated[str, StringConstraints(pattern=INSTANT_PATTERN), AfterValidator(_check_instant)]


def _check_https(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme != "https" or not parts.hostname or any(c.isspace() for c in value):
        raise ValueError(f"not an https URL: {value!r}")
    return check_line(value)


Url = Annotated[str, StringConstraints(max_length=2000), AfterValidator(_check_https)]

# ASCII digits, at most 30 of them on either side of the point, and nothing after the unit.
_DURATION_TEXT = re.compile(r"([0-9]{1,30}(?:\.[0-9]{1,30})?) ?(ns|us|µs|ms|s)")
_NS_PER_UNIT = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _normalise_duration(value: Any) -> Any:
    """Authoring may write `"0.008 ms"`; identity always sees whole nanoseconds (`8000`)."""
    if not isinstance(value, str):
        return value
    match = _DURATION_TEXT.fullmatch(value)
    if not match:
        shown = value if len(value) <= 40 else value[:39] + "…"
        raise ValueError(f"not a duration: {shown!r} (write integer nanoseconds or e.g. '0.5 ms')")
    nanoseconds = Fraction(match.group(1)) * _NS_PER_UNIT[match.group(2)]  # exact
    if nanoseconds.denominator != 1:
        raise ValueError(f"{value!r} is not a whole number of nanoseconds")
    if nanoseconds > MAX_SAFE_INTEGER:
        raise ValueError(f"{value!r} is over the longest duration, 2^53−1 ns (about 104 days)")
    return int(nanoseconds)


Duration = Annotated[NonNegativeInt, BeforeValidator(_normalise_duration)]


def _sorted_set(values: list[Any]) -> list[Any]:
    """Set-like lists are hashed sorted and de-duplicated (FORMAT.md §2)."""
    return sorted(set(values))


TokenSet = Annotated[list[Token], at_most(MAX_ITEMS, "items"), AfterValidator(_sorted_set)]
TextSet = Annotated[list[ShortText], at_most(MAX_ITEMS, "items"), AfterValidator(_sorted_set)]


def check_measured(value: float) -> float:
    """A measured value: never negative (as a duration), 0 or within the magnitudes above."""
    if value < 0:
        raise ValueError(f"{value!r} is negative: a measured value never is")
    if value != 0 and not MIN_MAGNITUDE <= value <= MAX_MAGNITUDE:
        raise ValueError(f"{value!r} is out of range: 0, or from 1e-100 to 1e100")
    return value


MeasuredValue = Annotated[FiniteNumber, AfterValidator(check_measured)]


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
