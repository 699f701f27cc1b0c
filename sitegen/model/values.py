"""The shared value rules of the format, as kernelindex.dev's schema states them
(docs/format.md): names, tokens, digests, instants, https URLs, durations, free text, set-like
lists, derived-axis expressions; the limits sitegen adds on how much one resource may hold;
the characters in free text that earn a warning; and the strict base model.

Like resources.py, this module does not postpone its annotations: pydantic would evaluate each
string again when it builds the models, at every start.
"""

import ast
import functools
import operator
import os
import re
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any
from urllib.parse import urlsplit

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
)
from pydantic.alias_generators import to_camel

from sitegen.model.text import (
    NOT_IN_LINE,
    NOT_IN_TEXT,
    character_name,
)

NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
TOKEN_PATTERN = r"^[a-z][a-z0-9_]*$"
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]*$"
DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"
# zod's `z.iso.datetime()`: UTC only, seconds optional, any number of fraction digits.
INSTANT_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?Z$"
COMMIT_PATTERN = r"^[0-9a-f]{40}$"
EXPRESSION_PATTERN = r"^[a-z0-9_+\-*%/() ]+$"
MAX_SAFE_INTEGER = 2**53 - 1  # the largest integer every JSON reader holds exactly

# How much one resource may hold (docs/checking.md): every count a page, a chart or a check
# iterates over is bounded, so that no file near the size limit can take the build's memory.
MAX_AXES = 64  # an operation's or a workload's axes, an implementation's support.axes
MAX_TENSORS = 64  # an operation's inputs and outputs; a workload's tensors and scalars
MAX_RANK = 16  # dimensions of a shape, entries of strides
MAX_LABELS = 64
MAX_ITEMS = 256  # every other list or map: authors, measurements, libraries, settings …
MAX_CASES = 1_000  # a WorkloadSuite's cases
MAX_TOKEN = 100  # tokens, axis names, map keys: the schema bounds none of them
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

# What free text may hold only with a warning, and how a message names it: model/text.py.
# The keys whose text may run over several lines.
MULTILINE_KEYS = frozenset({"description", "notes", "expression", "command"})


# Where the characters above can be in orjson's output, each a search for a literal first
# (fast): one class of them all, searched as text, costs ten times more.
_UNUSUAL_UTF8 = tuple(
    re.compile(pattern)
    for pattern in (
        rb"\\",  # every control character but DEL is written as an escape
        rb"\x7f",
        rb"\xc2[\x80-\x9f]",  # C1
        rb"\xd8\x9c",  # U+061C
        rb"\xe2\x80[\x8e\x8f\xa8-\xae]",  # U+200E/F, U+2028/9, U+202A–202E
        rb"\xe2\x81[\xa6-\xa9]",  # U+2066–2069
        rb"\xef\xb7[\x90-\xaf]",  # U+FDD0–FDEF
        rb"\xbf[\xbe\xbf]",  # U+xFFFE, U+xFFFF in every plane
    )
)


def text_warnings(value: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """Each string or key of a document (a resource, normalised) that holds a character above,
    as its location and what it holds. The format allows them: they are warnings."""
    # orjson writes every control character as an escape (a backslash) and the others in
    # UTF-8: a document whose JSON holds neither (all real ones) is not walked.
    encoded = orjson.dumps(value)
    if not any(marker.search(encoded) for marker in _UNUSUAL_UTF8):
        return []
    found: list[tuple[tuple[str | int, ...], str]] = []
    stack: list[tuple[Any, tuple[str | int, ...], bool]] = [(value, (), False)]
    while stack:
        item, location, multiline = stack.pop()
        if isinstance(item, str):
            match = (NOT_IN_TEXT if multiline else NOT_IN_LINE).search(item)
            if match:
                what = character_name(match.group())
                found.append((location, f"holds {what} at character {match.start() + 1}"))
        elif isinstance(item, dict):
            for key, member in item.items():
                if match := NOT_IN_LINE.search(key):
                    what = character_name(match.group())
                    found.append((location, f"a key holds {what} at character {match.start() + 1}"))
                stack.append((member, (*location, key), key in MULTILINE_KEYS))
        elif isinstance(item, list):
            stack.extend((member, (*location, i), multiline) for i, member in enumerate(item))
    return sorted(found, key=lambda pair: str(pair[0]))


# Free text of at most so many characters, as the schema bounds each field; any character.
Text50 = Annotated[str, StringConstraints(max_length=50)]
Text100 = Annotated[str, StringConstraints(max_length=100)]
Text200 = Annotated[str, StringConstraints(max_length=200)]
Text500 = Annotated[str, StringConstraints(max_length=500)]
Text1000 = Annotated[str, StringConstraints(max_length=1000)]
Text2000 = Annotated[str, StringConstraints(max_length=2000)]
Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN, max_length=200)]
Token = Annotated[str, StringConstraints(pattern=TOKEN_PATTERN, max_length=MAX_TOKEN)]
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=100)]
Digest = Annotated[str, StringConstraints(pattern=DIGEST_PATTERN)]
Commit = Annotated[str, StringConstraints(pattern=COMMIT_PATTERN)]


def _integral(value: Any) -> Any:
    """A JSON number is a number: `3.0` and `3e0` are the integer 3, as in JavaScript."""
    if type(value) is float and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    return value


Integer = Annotated[int, BeforeValidator(_integral)]
PositiveInt = Annotated[int, Field(ge=1), BeforeValidator(_integral)]
NonNegativeInt = Annotated[int, Field(ge=0), BeforeValidator(_integral)]
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


@functools.lru_cache(maxsize=4)
def _latest_text(epoch: str | None, hour: int) -> str:
    """The latest instant content may hold, as an instant's text to the second."""
    latest = _latest_instant(epoch, hour)
    return latest.strftime("%Y-%m-%dT%H:%M:%S") if latest.year <= 9999 else "9999-99"


def _days_in(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _check_instant(value: str) -> str:
    """An instant as zod's `z.iso.datetime()` reads one (the pattern fixes its shape): a real
    date and time of day, no later than a day after SOURCE_DATE_EPOCH, else after now."""
    month, day = int(value[5:7]), int(value[8:10])
    if not (1 <= month <= 12 and 1 <= day <= _days_in(int(value[0:4]), month)):
        raise ValueError(f"not a real date: {value!r}")
    seconds = value[16:19] if value[16] == ":" else ":00"
    if value[11:13] > "23" or value[14:16] > "59" or seconds > ":59":
        raise ValueError(f"not a real time of day: {value!r}")
    # Fixed-width ASCII in one order: comparing the texts compares the instants, to the second.
    if value[:16] + seconds > _latest_text(
        os.environ.get("SOURCE_DATE_EPOCH"), int(time.time()) // 3600
    ):
        raise ValueError(f"{value!r} is more than a day after the build's date")
    return value


Instant = Annotated[str, StringConstraints(pattern=INSTANT_PATTERN), AfterValidator(_check_instant)]


# What a URL's host may not hold (WHATWG's forbidden host code points, and `%`: sitegen does not
# decode a host to look again).
_NOT_IN_HOST = re.compile(r"[\x00-\x20#/:<>?@\[\\\]^|%\x7f]")


def _check_https(value: str) -> str:
    """An https URL with a host, as `new URL(value)` parses one; sitegen refuses in addition
    any whitespace or control character (the parser would drop or encode it, so the link would
    lead elsewhere than it reads) and a URL without `//` (a page would read it as relative)."""
    if NOT_IN_LINE.search(value) or any(c.isspace() for c in value):
        raise ValueError(f"not an https URL: {value!r} holds a space or a control character")
    parts = urlsplit(value)
    try:
        parts.port  # noqa: B018 (a port out of range raises)
    except ValueError as error:
        raise ValueError(f"not an https URL: {value!r}: {error}") from error
    host = parts.hostname or ""
    if parts.scheme != "https" or not value[6:8] == "//" or not host or _NOT_IN_HOST.search(host):
        raise ValueError(f"not an https URL: {value!r}")
    return value


Url = Annotated[str, StringConstraints(max_length=2000), AfterValidator(_check_https)]

# As the schema's pattern: JavaScript's `\d` is ASCII, its `\s` any of these.
_JS_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DURATION_TEXT = re.compile(f"([0-9]+(?:\\.[0-9]+)?)[{_JS_SPACE}]?(ns|us|µs|ms|s)")
_NS_PER_UNIT = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _normalise_duration(value: Any) -> Any:
    """Authoring may write `"0.008 ms"`; identity always sees whole nanoseconds (`8000`)."""
    if not isinstance(value, str):
        return _integral(value)
    match = _DURATION_TEXT.fullmatch(value)
    if not match:
        shown = value if len(value) <= 40 else value[:39] + "…"
        raise ValueError(f"not a duration: {shown!r} (write integer nanoseconds or e.g. '0.5 ms')")
    # In doubles, as the schema computes it (`Number(text) * unit`): the same text is the same
    # number of nanoseconds, or refused, in both.
    nanoseconds = float(match.group(1)) * _NS_PER_UNIT[match.group(2)]
    if not nanoseconds.is_integer():
        raise ValueError(f"{value!r} is not a whole number of nanoseconds")
    if nanoseconds > MAX_SAFE_INTEGER:
        raise ValueError(f"{value!r} is over the longest duration, 2^53−1 ns (about 104 days)")
    return int(nanoseconds)


Duration = Annotated[NonNegativeInt, BeforeValidator(_normalise_duration)]


def _sorted_set(values: list[str]) -> list[str]:
    """Set-like lists are hashed sorted and de-duplicated, in JavaScript's order: by UTF-16 code
    unit, which puts U+E000–U+FFFF after the characters beyond U+FFFF."""
    return sorted(set(values), key=lambda text: text.encode("utf-16-be"))


TokenSet = Annotated[list[Token], at_most(MAX_ITEMS, "items"), AfterValidator(_sorted_set)]
Text50Set = Annotated[list[Text50], at_most(MAX_ITEMS, "items"), AfterValidator(_sorted_set)]
Text100Set = Annotated[list[Text100], at_most(MAX_ITEMS, "items"), AfterValidator(_sorted_set)]
Text200Set = Annotated[list[Text200], at_most(MAX_ITEMS, "items"), AfterValidator(_sorted_set)]


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
            place = len(text) - len(text[position:].lstrip()) + 1
            raise ValueError(f"unexpected character at {place} in expression {text!r}")
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


_ARITHMETIC: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


def evaluate_expression(expression: str, axes: Mapping[str, int]) -> int:
    """A derived-axis expression (integers, axis names, + - * // %, parentheses) over `axes`;
    KeyError for an axis `axes` lacks, ValueError for anything outside the grammar."""

    def walk(node: ast.expr) -> int:
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            return _ARITHMETIC[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.Name):
            return axes[node.id]
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        raise ValueError(f"not a derived-axis expression: {expression!r}")

    return walk(ast.parse(expression, mode="eval").body)


# The schema's pattern; the grammar above (`check_expression`) is a warning.
Expression = Annotated[str, StringConstraints(pattern=EXPRESSION_PATTERN, max_length=200)]
