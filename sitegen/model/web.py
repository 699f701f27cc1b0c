"""URLs from outside (`--base-url`, a deploy's URL, `diff`'s base): one strict reading, the
standard library only (the command line parses options before any stage is imported)."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

# RFC 3986's characters, nothing else: no space, control, quote, `<>\\^`{|}` or non-ASCII.
_URL_TEXT = re.compile(r"[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]+")
_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_DNS_NAME = re.compile(
    r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*"
)
MAX_URL = 2000


def check_web_url(value: str, schemes: tuple[str, ...] = ("http", "https")) -> SplitResult:
    """`value` split, if it is an absolute URL of one of `schemes` that every reader parses
    alike: RFC 3986's characters only, no user name, a host that is a DNS name or an IP
    address, a port from 1 to 65535. ValueError saying what is wrong otherwise (the value
    shown escaped, cut at 100 characters)."""
    shown = repr(value if len(value) <= 100 else value[:99] + "…")
    if len(value) > MAX_URL:
        raise ValueError(f"a URL is at most {MAX_URL} characters: {shown}")
    if not _URL_TEXT.fullmatch(value):
        raise ValueError(
            f"not a URL: {shown} holds a space, a control or non-ASCII character or one of "
            '<>"\\^`{|}'
        )
    if _PERCENT.search(value):
        raise ValueError(f"not a URL: {shown} has a % not followed by two hex digits")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:  # a port out of range or not a number, a bracket unclosed
        parts, port = urlsplit(value.replace("[", "").replace("]", "")), 0
    if parts.scheme.lower() not in schemes or not parts.netloc:
        raise ValueError(f"not an {'/'.join(schemes)} URL: {shown}")
    if "@" in parts.netloc:
        raise ValueError(f"a URL with a user name or password: {shown}")
    if not _is_host(parts.hostname or ""):
        raise ValueError(
            f"not a host name or IP address: {parts.hostname or parts.netloc!r} in {shown}"
        )
    if port == 0 or parts.netloc.endswith(":"):
        raise ValueError(f"a port is a number from 1 to 65535: {shown}")
    return parts


def _is_host(host: str) -> bool:
    """A DNS name (its last label not all digits) or an IP address (IPv6 without brackets)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return bool(_DNS_NAME.fullmatch(host)) and not host.rpartition(".")[2].isdigit()
    return True
