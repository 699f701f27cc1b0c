"""Read the manifest of a site to compare with: from a git ref, a directory, a file or a URL.

`read_manifest` takes what `sitegen diff` is given (BASE or HEAD): an http(s) URL of a published
`manifest.json`; a built site (a sitegen output directory) or a manifest file; a content
directory; or else a git ref, whose content tree is read with `git archive` into a temporary
directory, never checked out. `preview_baseline` is what a deploy preview compares with, tried
in order (docs/deploy.md): an explicit `--compare-with`; the merge base of HEAD and the base
branch fetched from `origin`; the production site's `manifest.json`. When none can be read the
build still succeeds and the changes page says why.

A base is as hostile as content: a manifest is parsed by content's strict parser (depth, size,
duplicate keys, number range; content/strict_json.py) and checked field by field with the
same value rules (publish/manifest.py); a fetch is https (or http to this machine), and so is
every redirect it follows, within a size and a total time.
"""

from __future__ import annotations

import io
import ipaddress
import json
import os
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from http.client import HTTPMessage
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

from sitegen.content.strict_json import Limits, parse_json
from sitegen.model.problems import format_report
from sitegen.model.web import check_web_url
from sitegen.pipeline import manifest_of_content
from sitegen.publish.compare import Baseline
from sitegen.publish.deploy import Deployment
from sitegen.publish.manifest import Manifest, ManifestError, parse_manifest
from sitegen.publish.write import MARKER
from sitegen.site.urls import UrlError, parse_base_url

MAX_MANIFEST_BYTES = 64 * 1024 * 1024  # the real catalog's is a few MB
# A manifest nests four levels; its objects hold a dozen keys; an entry per resource.
MANIFEST_LIMITS = Limits(depth=8, members=64, items=10_000_000, nulls=True)
FETCH_TIMEOUT_S = 30  # for the whole fetch, redirects and a slow body included
MAX_REDIRECTS = 5
READ_CHUNK = 1024 * 1024
GIT_TIMEOUT_S = 120
FETCH_DEPTH = 200  # commits of the base branch fetched into a shallow clone


class BaseError(Exception):
    """A site we cannot read to compare with; the message says which and why."""


class BaseContentError(BaseError):
    """A content tree to compare with that does not check."""


def read_manifest(
    spec: str, *, cwd: Path, content_path: str = "content", base_url: str | None = None
) -> tuple[Manifest, str]:
    """The manifest `spec` names, and a label for it. Raises BaseError."""
    if spec.startswith(("https://", "http://")):
        return fetch_manifest(spec), spec
    path = cwd / spec
    if path.is_dir():
        if (path / MARKER).is_file() and (path / "manifest.json").is_file():
            return _manifest_file(path / "manifest.json"), f"{spec.rstrip('/')}/ (built site)"
        return _content_manifest(path, base_url), f"{spec.rstrip('/')}/"
    if path.is_file():
        return _manifest_file(path), spec
    root = git_root(cwd)
    commit = _rev_parse(root, spec)
    if commit is None:
        raise BaseError(f"{spec}: not a directory, a manifest file, an http(s) URL or a git commit")
    return manifest_at_commit(root, commit, content_path, base_url), f"{spec} at {commit[:7]}"


def preview_baseline(deployment: Deployment, content_dir: Path) -> Baseline:
    """The base a preview is compared with; never raises: failures become notes, and an
    unusable base gives a preview whose changes page says why."""
    if deployment.compare_with is not None:
        try:
            manifest, label = read_manifest(
                deployment.compare_with,
                cwd=Path.cwd(),
                content_path=_content_path(content_dir),
                base_url=deployment.base_url,
            )
        except Exception as error:  # any base that cannot be used: the preview says why
            return Baseline(deployment.compare_with, None, (_reason(error),))
        return Baseline(label, manifest)
    notes: list[str] = []
    try:
        root = git_root(content_dir)
        commit, how = base_branch_commit(root, deployment.base_branch)
        relative = content_dir.resolve().relative_to(root).as_posix()
        manifest = manifest_at_commit(root, commit, relative, deployment.base_url)
        return Baseline(f"{deployment.base_branch} at {commit[:7]} ({how})", manifest)
    except Exception as error:  # as above
        notes.append(f"git: {_reason(error)}")
    try:
        _, base = parse_base_url(deployment.base_url)
    except UrlError as error:
        notes.append(str(error))
        return Baseline("nothing", None, tuple(notes))
    url = base + "manifest.json"
    try:
        return Baseline(f"the production site ({url})", fetch_manifest(url), tuple(notes))
    except Exception as error:  # as above
        notes.append(f"production manifest: {_reason(error)}")
    return Baseline("nothing", None, tuple(notes))


def _reason(error: Exception) -> str:
    """A failure as a note: a BaseError says it all; anything else is named by its type."""
    if isinstance(error, BaseError | ValueError) and not isinstance(error, UnicodeError):
        return str(error)
    return f"{type(error).__name__}: {error}"


# --- git ----------------------------------------------------------------------------------------


def _git(
    root: Path, *args: str, timeout: float = GIT_TIMEOUT_S
) -> subprocess.CompletedProcess[bytes]:
    # Never wait for a password or a host key: a build has no one to answer.
    environment = {
        "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
    }
    if not root.is_dir():
        raise BaseError(f"{root}: no such directory")
    try:
        return subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            timeout=timeout,
            env=environment,
            check=False,
        )
    except FileNotFoundError as error:
        raise BaseError("git is not installed") from error
    except subprocess.TimeoutExpired as error:
        raise BaseError(f"git {args[0]} took longer than {timeout:.0f} s") from error


def _stderr(result: subprocess.CompletedProcess[bytes]) -> str:
    lines = result.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"exit status {result.returncode}"


def git_root(directory: Path) -> Path:
    start = directory if directory.is_dir() else directory.parent
    result = _git(start, "rev-parse", "--show-toplevel")
    if result.returncode != 0:
        raise BaseError(f"{directory} is not in a git checkout")
    return Path(result.stdout.decode().strip())


def _rev_parse(root: Path, ref: str) -> str | None:
    if ref.startswith("-"):
        return None  # never let a ref be read as an option
    result = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    return result.stdout.decode().strip() if result.returncode == 0 else None


def base_branch_commit(root: Path, branch: str) -> tuple[str, str]:
    """The commit a preview of HEAD is compared with: its merge base with `origin/<branch>`."""
    ref = f"refs/remotes/origin/{branch}"
    shallow = _git(root, "rev-parse", "--is-shallow-repository").stdout.strip() == b"true"
    fetch = ["fetch", "--no-tags", "--quiet"]
    if shallow:
        fetch.append(f"--depth={FETCH_DEPTH}")
    fetched = _git(root, *fetch, "origin", f"+refs/heads/{branch}:{ref}")
    tip = _rev_parse(root, ref)
    if tip is None:
        raise BaseError(f"cannot fetch {branch} from origin: {_stderr(fetched)}")
    stale = "" if fetched.returncode == 0 else ", not refreshed: fetch failed"
    merge_base = _git(root, "merge-base", "HEAD", tip)
    if merge_base.returncode == 0:
        return merge_base.stdout.decode().strip(), f"merge base{stale}"
    return tip, f"tip of origin/{branch}: no merge base in this clone{stale}"


def manifest_at_commit(
    root: Path, commit: str, content_path: str, base_url: str | None
) -> Manifest:
    """The manifest of the content tree at `commit`, read with `git archive` (no checkout)."""
    content_path = _path_in_repository(root, content_path)
    with tempfile.TemporaryDirectory(prefix="sitegen-base-") as workspace:
        target = Path(workspace, content_path)
        listed = _git(root, "ls-tree", "-d", "--name-only", commit, "--", content_path)
        if listed.returncode != 0:
            raise BaseError(f"git ls-tree {commit[:7]}: {_stderr(listed)}")
        if not listed.stdout.strip():
            target.mkdir(parents=True)  # no content tree yet: everything is new
        else:
            archived = _git(root, "archive", "--format=tar", commit, "--", content_path)
            if archived.returncode != 0:
                raise BaseError(f"git archive {commit[:7]}: {_stderr(archived)}")
            _extract(archived.stdout, Path(workspace))
        return _content_manifest(target, base_url, f"{content_path} at {commit[:7]}")


def _path_in_repository(root: Path, content_path: str) -> str:
    """`--content-path` as a path inside the repository: relative to its top (as given, or made
    so from an absolute path); BaseError for one outside it. Never the working tree's."""
    given = Path(content_path)
    if given.is_absolute():
        try:
            given = Path(os.path.realpath(given)).relative_to(os.path.realpath(root))
        except ValueError:
            raise BaseError(
                f"--content-path: {content_path} is outside the repository {root}; hint: give "
                "the content tree's path inside the repository, such as content"
            ) from None
    relative = os.path.normpath(given.as_posix())
    if relative == ".." or relative.startswith("../") or "\0" in relative:
        raise BaseError(
            f"--content-path: {content_path} is outside the repository {root}; hint: give "
            "the content tree's path inside the repository, such as content"
        )
    return relative


def _extract(data: bytes, destination: Path) -> None:
    """Regular files and folders only: no links, nothing outside `destination`."""
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = [
            m
            for m in archive.getmembers()
            if (m.isfile() or m.isdir())
            and not m.name.startswith("/")
            and ".." not in Path(m.name).parts
        ]
        if hasattr(tarfile, "data_filter"):
            archive.extractall(destination, members=members, filter="data")
        else:  # pragma: no cover - Python < 3.11.4
            archive.extractall(destination, members=members)


# --- files and URLs -----------------------------------------------------------------------------


def _content_manifest(path: Path, base_url: str | None, label: str | None = None) -> Manifest:
    result = manifest_of_content(path, Deployment(base_url=base_url))
    if result.manifest is None:
        checked = result.checked
        report = format_report(checked.problems, checked.resource_count, checked.file_count)
        last = report.splitlines()[-1] if report else "errors"
        raise BaseContentError(f"{label or path}: the content does not check: {last}")
    return result.manifest


def _manifest_file(path: Path) -> Manifest:
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise BaseError(f"{path}: larger than {MAX_MANIFEST_BYTES // 2**20} MiB")
        data = path.read_bytes()
    except OSError as error:
        raise BaseError(f"{path}: {error.strerror or error}") from error
    return parse_manifest_bytes(data, str(path))


def fetch_manifest(url: str) -> Manifest:
    """A published manifest: https (or http on this machine only), at most 64 MiB, within
    FETCH_TIMEOUT_S in all. A redirect is followed only to where the first URL could be
    fetched: from https to https, from this machine to this machine."""
    rule = _fetch_rule(url)
    deadline = time.monotonic() + FETCH_TIMEOUT_S
    opener = urllib.request.build_opener(_Redirects(rule))
    request = urllib.request.Request(
        url, headers={"Accept": "application/json", "User-Agent": "sitegen"}
    )
    try:
        with opener.open(request, timeout=FETCH_TIMEOUT_S) as response:
            data = _read_within(response, url, deadline)
    except urllib.error.HTTPError as error:
        raise BaseError(f"{url}: HTTP {error.code}") from error
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise BaseError(f"{url}: {reason}") from error
    return parse_manifest_bytes(data, url)


_LOOPBACK = "this machine"
_HTTPS = "https"


def _fetch_rule(url: str) -> str:
    """Why `url` may be fetched: it is https, or it is on this machine; BaseError if neither
    (or if it is not a URL check_web_url accepts)."""
    try:
        parts = check_web_url(url)
    except ValueError as error:
        raise BaseError(f"{error}; hint: give the https URL of a published manifest.json") from None
    if _loopback(parts.hostname or ""):
        return _LOOPBACK
    if parts.scheme != "https":
        raise BaseError(f"{url}: only https, or http to this machine")
    return _HTTPS


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Redirects within the rule the first URL was fetched under, at most MAX_REDIRECTS."""

    max_redirections = MAX_REDIRECTS

    def __init__(self, rule: str) -> None:
        super().__init__()
        self.rule = rule

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        try:
            parts = check_web_url(newurl)
            allowed = True
        except ValueError:
            parts, allowed = urlsplit(""), False
        if allowed and self.rule == _LOOPBACK:
            allowed = _loopback(parts.hostname)
        elif allowed:
            allowed = parts.scheme == "https"
        if not allowed:
            fp.close()  # the redirect's own response: read no further
            raise BaseError(
                f"{req.full_url}: redirected to {newurl[:200]!r}, which is not "
                + ("on this machine" if self.rule == _LOOPBACK else "https")
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _read_within(response: IO[bytes], url: str, deadline: float) -> bytes:
    data = bytearray()
    while chunk := response.read(READ_CHUNK):
        data += chunk
        if len(data) > MAX_MANIFEST_BYTES:
            raise BaseError(f"{url}: larger than {MAX_MANIFEST_BYTES // 2**20} MiB")
        if time.monotonic() > deadline:
            raise BaseError(f"{url}: took longer than {FETCH_TIMEOUT_S} s")
    return bytes(data)


def _loopback(host: str | None) -> bool:
    if host == "localhost":
        return True
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_manifest_bytes(data: bytes, where: str) -> Manifest:
    """A manifest's bytes, read as strictly as content; BaseError naming what is wrong."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BaseError(f"{where}: not a JSON manifest: not UTF-8 at byte {error.start}") from None
    try:
        document, problems = parse_json(text, MANIFEST_LIMITS)
    except json.JSONDecodeError as error:
        message = f"{error.lineno}:{error.colno}: {error.msg}"
        raise BaseError(f"{where}: not a JSON manifest: {message}") from None
    if problems:
        path, message = problems[0]
        more = f" (and {len(problems) - 1:,} more)" if len(problems) > 1 else ""
        raise BaseError(f"{where}: not a manifest sitegen reads: {path}: {message}{more}")
    try:
        return parse_manifest(document)
    except ManifestError as error:
        raise BaseError(f"{where}: {error}") from error


def _content_path(content_dir: Path) -> str:
    """The content tree's path inside its repository, for reading it at another commit."""
    try:
        return content_dir.resolve().relative_to(git_root(content_dir)).as_posix()
    except (BaseError, ValueError):
        return content_dir.as_posix()
