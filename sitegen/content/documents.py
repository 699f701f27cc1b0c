"""One content file to resources: a resource, a stored run bundle, or the lines of a bulk file
(`.jsonl`, `.jsonl.zst`: a resource or a bundle a line, FORMAT.md §4), each validated into a
`LoadedResource` or reported as problems."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from sitegen.content.bulk import COMPRESSED_SUFFIX, bulk_lines, is_bulk
from sitegen.content.bulk import MAX_FILE_BYTES as MAX_BULK_FILE_BYTES
from sitegen.content.loaded import LoadedResource
from sitegen.content.strict_json import parse_clean, parse_json, quote
from sitegen.content.validate import describe, describe_errors, json_type
from sitegen.content.walk import decode, open_file, read_bytes
from sitegen.model.digest import API_VERSION, digest
from sitegen.model.problems import Problem
from sitegen.model.resources import KINDS

MAX_FILE_BYTES = 4 * 1024 * 1024  # one resource or bundle; the largest real one is ~5 KB
BUNDLE_KEYS = frozenset({"run", "protocol", "environment"})
BUNDLE_ROLES = {
    "run": "BenchmarkRun",
    "protocol": "BenchmarkProtocol",
    "environment": "ExecutionEnvironment",
}


def load_path(
    path: str | Path, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    """The resources of one file: a bulk file's lines if it ends in `.jsonl` or `.jsonl.zst`,
    else one document.

    A failure of sitegen's own on one file is that file's problem: every other file is still
    checked, and none of this file's resources is used.
    """
    found: list[LoadedResource] = []
    found_problems: list[Problem] = []
    try:
        if is_bulk(str(path)):
            load_bulk(path, shown, found, found_problems)
        else:
            load_file(path, shown, found, found_problems)
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


def load_file(
    path: str | Path, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    data = read_bytes(path, shown, MAX_FILE_BYTES, problems)
    if data is not None:
        load_data(data, shown, resources, problems)


def load_data(
    data: bytes, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    """One `.json` document's bytes, as read from a file."""
    if len(data) > MAX_FILE_BYTES:
        problems.append(
            Problem(
                shown, "-", f"file is {len(data):,} bytes, over the limit of {MAX_FILE_BYTES:,}"
            )
        )
        return
    clean = parse_clean(data)
    if clean is not None:
        _load_value(clean, shown, resources, problems)
        return
    text = decode(data, shown, problems)
    if text is None:
        return
    _load_document(text, shown, resources, problems)


def load_resource_file(
    path: str | Path, shown: str, kind: str, problems: list[Problem]
) -> LoadedResource | None:
    """The one resource of `kind` a file must hold (an importer's input, such as the
    ExecutionEnvironment a contributor describes), checked as strictly as content."""
    data = read_bytes(path, shown, MAX_FILE_BYTES, problems)
    if data is None:
        return None
    value = parse_clean(data)
    if value is None:
        text = decode(data, shown, problems)
        if text is None:
            return None
        parsed, value = _parse_document(text, shown, problems)
        if not parsed:
            return None
    if isinstance(value, dict) and set(value) == BUNDLE_KEYS:
        problems.append(Problem(shown, "$", f"expected one {kind}, found a run bundle"))
        return None
    return validate_resource(value, shown, "", problems, expected_kind=kind)


def load_bulk(
    path: str | Path, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    handle = open_file(path, shown, MAX_BULK_FILE_BYTES, problems)
    if handle is not None:
        with handle:
            compressed = str(path).endswith(COMPRESSED_SUFFIX)
            load_bulk_stream(handle, compressed, shown, resources, problems)


def load_bulk_stream(
    stream: IO[bytes],
    compressed: bool,
    shown: str,
    resources: list[LoadedResource],
    problems: list[Problem],
) -> None:
    """Each line of a bulk file, read as a `.json` file's bytes are, named `FILE:LINE`."""
    for number, line in bulk_lines(stream, compressed, shown, problems):
        load_data(line, f"{shown}:{number}", resources, problems)


def _load_document(
    text: str, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    parsed, value = _parse_document(text, shown, problems)
    if parsed:
        _load_value(value, shown, resources, problems)


def _parse_document(text: str, shown: str, problems: list[Problem]) -> tuple[bool, Any]:
    """(True, the value) of a strictly valid JSON text, else (False, None) and its problems."""
    try:
        value, found = parse_json(text)
    except json.JSONDecodeError as error:
        message = error.msg[0].lower() + error.msg[1:]
        if message.endswith(" at"):  # "Invalid control character at": the place is in `where`
            message = message[:-3] + " in a string"
        problems.append(Problem(shown, f"{error.lineno}:{error.colno}", f"invalid JSON: {message}"))
        return False, None
    if found:
        problems.extend(Problem(shown, where, message) for where, message in found)
        return False, None
    return True, value


def _load_value(
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
    return LoadedResource(shown, where, resource, digest(kind, document["spec"]), document)
