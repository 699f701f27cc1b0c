"""web.py: URLs from outside, read strictly, each refusal one line."""

from __future__ import annotations

import pytest

from sitegen.model.web import check_web_url


@pytest.mark.parametrize(
    "good",
    [
        "https://kernelindex.dev/",
        "http://127.0.0.1:8000/manifest.json",
        "http://[::1]:65535/a?b=c#d",
        "https://x.example:1/%7Euser/",
        "http://localhost",
    ],
)
def test_check_web_url_accepts(good: str) -> None:
    assert check_web_url(good).geturl() == good


SPACED = 'not a URL: {!r} holds a space, a control or non-ASCII character or one of <>"\\^`{{|}}'


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("https://ex ample.org/", SPACED.format("https://ex ample.org/")),
        ("https://x.org/a\r\nb", SPACED.format("https://x.org/a\r\nb")),
        ("https://x.org/<x>", SPACED.format("https://x.org/<x>")),
        ("https://é.example/", SPACED.format("https://é.example/")),
        ("https://x.org:99999/", "a port is a number from 1 to 65535: 'https://x.org:99999/'"),
        (
            "http://127.0.0.1:abc/m.json",
            "a port is a number from 1 to 65535: 'http://127.0.0.1:abc/m.json'",
        ),
        ("https://x.org:0/", "a port is a number from 1 to 65535: 'https://x.org:0/'"),
        ("https://x.org:/", "a port is a number from 1 to 65535: 'https://x.org:/'"),
        ("https://1.2.3/", "not a host name or IP address: '1.2.3' in 'https://1.2.3/'"),
        ("https://-x.org/", "not a host name or IP address: '-x.org' in 'https://-x.org/'"),
        ("http://[::1/m", "not a host name or IP address: '::1' in 'http://[::1/m'"),
        ("https://u:p@x.org/", "a URL with a user name or password: 'https://u:p@x.org/'"),
        (
            "https://x.org/%zz",
            "not a URL: 'https://x.org/%zz' has a % not followed by two hex digits",
        ),
        ("ftp://x.org/", "not an http/https URL: 'ftp://x.org/'"),
        ("https:///path", "not an http/https URL: 'https:///path'"),
        (
            "https://x.org/" + "a" * 2000,
            "a URL is at most 2000 characters: 'https://x.org/" + "a" * 85 + "…'",
        ),
    ],
)
def test_check_web_url_refuses_in_one_line(bad: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        check_web_url(bad)
    assert str(refused.value) == message
