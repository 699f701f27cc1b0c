"""One content file to resources, in one pass: read → decode → parse → validate.

A file holds one document (`.json`) or one a line (a bulk file, `.jsonl` or `.jsonl.zst`); a
document is a resource or a stored run bundle `{run, protocol, environment}` (FORMAT.md §4).
Each step either hands the next its value or reports why not, tied to the file (and the line
of a bulk file): `read_documents` yields each document's bytes, `parse_document` decodes and
parses them strictly, `validate_document` makes them `LoadedResource`s.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sitegen.content.bulk import COMPRESSED_SUFFIX, bulk_lines, is_bulk
from sitegen.content.bulk import MAX_FILE_BYTES as MAX_BULK_FILE_BYTES
from sitegen.content.loaded import LoadedResource
from sitegen.content.strict_json import parse_clean, parse_json, quote
from sitegen.content.validate import describe, describe_errors, json_type
from sitegen.content.walk import open_file, read_bytes
from sitegen.model.digest import API_VERSION, digest
from sitegen.model.problems import Problem, Severity, json_path
from sitegen.model.resources import KINDS
from sitegen.model.values import text_warnings

MAX_FILE_BYTES = 4 * 1024 * 1024  # one resource or bundle; the largest real one is ~5 KB
BULK_BUFFER_BYTES = 1024 * 1024  # a bulk file is read in pieces of 1 KiB (compressed) or 1 MiB
SHOWN_ESCAPED = "the format allows it; pages, feeds and terminals show it escaped"
BUNDLE_KEYS = frozenset({"run", "protocol", "environment"})
BUNDLE_ROLES = {
    "run": "BenchmarkRun",
    "protocol": "BenchmarkProtocol",
    "environment": "ExecutionEnvironment",
}


def load_path(
    path: str | Path, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    """Every resource of one file, read from disk.

    A failure of sitegen's own on one file is that file's problem: every other file is still
    checked, and none of this file's resources is used.
    """
    found: list[LoadedResource] = []
    found_problems: list[Problem] = []
    try:
        for place, data in read_documents(path, shown, found_problems):
            load_document(data, place, found, found_problems)
    except Exception as error:  # reported, with the file, as a problem
        text = f"{type(error).__name__}: {error}"
        problems.append(
            Problem(
                shown,
                "-",
                f"sitegen failed on this file ({text[:200]})",
                "a bug in sitegen: please report it with the file",
            )
        )
        return
    resources += found
    problems += found_problems


def load_bytes(
    data: bytes, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    """Every resource of one file held in memory (an import, before it is written), read as
    `load_path` reads it from disk; `shown` ends as the file's name does."""
    if is_bulk(shown):
        lines = bulk_lines(io.BytesIO(data), shown.endswith(COMPRESSED_SUFFIX), shown, problems)
        for number, line in lines:
            load_document(line, f"{shown}:{number}", resources, problems)
    else:
        load_document(data, shown, resources, problems)


# --- read -----------------------------------------------------------------------------------------


def read_documents(
    path: str | Path, shown: str, problems: list[Problem]
) -> Iterator[tuple[str, bytes]]:
    """Each document of a file as where it is shown and its bytes: a `.json` file whole, a
    bulk file line by line (`FILE:LINE`), streamed. Nothing when the file cannot be read."""
    if not is_bulk(str(path)):
        data = read_bytes(path, shown, MAX_FILE_BYTES, problems)
        if data is not None:
            yield shown, data
        return
    opened = open_file(path, shown, MAX_BULK_FILE_BYTES, problems)
    if opened is None:
        return
    with io.BufferedReader(opened.handle, BULK_BUFFER_BYTES) as handle:
        compressed = str(path).endswith(COMPRESSED_SUFFIX)
        for number, line in bulk_lines(handle, compressed, shown, problems):
            yield f"{shown}:{number}", line


def load_document(
    data: bytes, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    """One document's bytes: parsed, then validated into resources."""
    value = parse_document(data, shown, problems)
    if value is not None:
        validate_document(value, shown, resources, problems)


def load_resource_file(
    path: str | Path, shown: str, kind: str, problems: list[Problem]
) -> LoadedResource | None:
    """The one resource of `kind` a file must hold (an importer's input, such as the
    ExecutionEnvironment a contributor describes), checked as strictly as content."""
    data = read_bytes(path, shown, MAX_FILE_BYTES, problems)
    value = None if data is None else parse_document(data, shown, problems)
    if value is None:
        return None
    if isinstance(value, dict) and set(value) == BUNDLE_KEYS:
        problems.append(Problem(shown, "$", f"expected one {kind}, found a run bundle"))
        return None
    return validate_resource(value, shown, "", problems, expected_kind=kind)


# --- decode and parse -----------------------------------------------------------------------------


def parse_document(data: bytes, shown: str, problems: list[Problem]) -> Any:
    """The value of one document's bytes, strictly parsed; None, and its problems, when they
    are not one (`null` is never a document: the format refuses it everywhere)."""
    if len(data) > MAX_FILE_BYTES:
        problems.append(
            Problem(
                shown, "-", f"file is {len(data):,} bytes, over the limit of {MAX_FILE_BYTES:,}"
            )
        )
        return None
    clean = parse_clean(data)  # the fast path: a document orjson wrote
    if clean is not None:
        return clean
    text = _decode(data, shown, problems)
    if text is None:
        return None
    try:
        value, found = parse_json(text)
    except json.JSONDecodeError as error:
        message = error.msg[0].lower() + error.msg[1:]
        if message.endswith(" at"):  # "Invalid control character at": the place is in `where`
            message = message[:-3] + " in a string"
        problems.append(Problem(shown, f"{error.lineno}:{error.colno}", f"invalid JSON: {message}"))
        return None
    if found:
        problems.extend(Problem(shown, where, message) for where, message in found)
        return None
    return value


def _decode(data: bytes, shown: str, problems: list[Problem]) -> str | None:
    if data.startswith(b"\xef\xbb\xbf"):
        problems.append(
            Problem(shown, "-", "file starts with a byte order mark", "save as UTF-8 without BOM")
        )
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        problems.append(
            Problem(
                shown,
                f"line {line}",
                f"not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})",
            )
        )
        return None


# --- validate -------------------------------------------------------------------------------------


def validate_document(
    value: Any, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    """A parsed document: a resource, a bundle, or a problem."""
    if isinstance(value, dict) and set(value) == BUNDLE_KEYS:
        _load_bundle(value, shown, resources, problems)
    elif isinstance(value, dict) and "apiVersion" in value:
        loaded = validate_resource(value, shown, "", problems)
        if loaded:
            resources.append(loaded)
    else:
        problems.append(
            Problem(
                shown,
                "$",
                "not a resource or a run bundle",
                "a resource has apiVersion, kind, metadata and spec; a bundle has "
                "exactly run, protocol and environment",
            )
        )


def _load_bundle(
    value: dict[str, Any], shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    """A stored run bundle: its protocol and environment must hash to the run's digests."""
    members: dict[str, LoadedResource] = {}
    for role, kind in BUNDLE_ROLES.items():
        part = value[role]
        loaded = validate_resource(part, shown, role, problems, expected_kind=kind)
        if loaded:
            members[role] = loaded
            resources.append(loaded)
    run = members.get("run")
    if run is None:
        return
    for role, key in (("protocol", "protocolDigest"), ("environment", "environmentDigest")):
        member = members.get(role)
        claimed = run.spec[key]
        if member and member.digest != claimed:
            problems.append(
                Problem(
                    shown,
                    role,
                    f"embedded {member.kind} hashes to {member.digest}, but run.spec.{key} is "
                    f"{claimed}",
                    "was it edited after the run was recorded?",
                )
            )


def validate_resource(
    value: Any, shown: str, where: str, problems: list[Problem], expected_kind: str | None = None
) -> LoadedResource | None:
    """Validate one resource object; report every problem under `where`."""
    prefix = f"{where}." if where else ""
    if not isinstance(value, dict):
        problems.append(
            Problem(shown, where or "$", f"expected a resource object, got {json_type(value)}")
        )
        return None
    kind = value.get("kind")
    if value.get("apiVersion") != API_VERSION:
        problems.append(
            Problem(
                shown,
                f"{prefix}apiVersion",
                f"expected {quote(API_VERSION)}, got {describe(value.get('apiVersion'))}",
            )
        )
        return None
    if not isinstance(kind, str) or kind not in KINDS or (expected_kind and kind != expected_kind):
        allowed = expected_kind or "one of " + ", ".join(sorted(KINDS))
        problems.append(
            Problem(shown, f"{prefix}kind", f"expected {allowed}, got {describe(kind)}")
        )
        return None
    try:
        resource = KINDS[kind].model_validate(value)
    except ValidationError as error:
        problems.extend(
            Problem(shown, f"{prefix}{path}", message, hint)
            for path, message, hint in describe_errors(error, value)
        )
        return None
    document = resource.document_json()
    for location, message in resource.warnings():
        problems.append(Problem(shown, f"{prefix}{location}", message, "", Severity.WARNING))
    for path, message in text_warnings(document):
        problems.append(
            Problem(shown, f"{prefix}{json_path(path)}", message, SHOWN_ESCAPED, Severity.WARNING)
        )
    return LoadedResource(shown, where, resource, digest(kind, document["spec"]), document)
