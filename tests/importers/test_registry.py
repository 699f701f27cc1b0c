"""The importer boundary: the site asks the registry, never a source by name."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import sitegen
from sitegen.importers import registry

PACKAGE = Path(sitegen.__file__).parent
# Python 3.12 splits f-strings into parts; their text is in FSTRING_MIDDLE tokens.
TEXT = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def _code_tokens(path: Path) -> list[tuple[int, str]]:
    """Names and strings in `path` that are code: comments and docstrings say what examples
    look like and may name a source."""
    source = path.read_text(encoding="utf-8")
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    found = []
    previous = tokenize.NEWLINE  # the last token that is not layout or a comment
    for token in tokens:
        if token.type == tokenize.NAME:
            found.append((token.start[0], token.string))
        # A string that opens a statement is a docstring (or a statement that does nothing).
        elif token.type in TEXT and previous not in (tokenize.NEWLINE, tokenize.DEDENT):
            found.append((token.start[0], token.string))
        if token.type not in (tokenize.NL, tokenize.INDENT, tokenize.COMMENT):
            previous = token.type
    return found


def test_nothing_outside_importers_names_a_source() -> None:
    # The kernelindex importer is named after the format's home (kernelindex.dev/v1alpha1, which
    # every module names); the sources it imports are its export's, looked for instead.
    sources = {importer.name for importer in registry.registered()} - {"kernelindex"}
    sources |= {"gpumode", "kernelbot", "flashinfer", "sol-execbench", "mlperf"}
    assert "liger" in sources  # the check below means something only with a source to look for
    named = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if (PACKAGE / "importers") in path.parents:
            continue
        for line, text in _code_tokens(path):
            if any(source in text.lower() for source in sources):
                named.append(f"{path.relative_to(PACKAGE)}:{line}: {text}")
    assert named == []


def test_a_source_named_in_code_is_found(tmp_path: Path) -> None:
    path = tmp_path / "leak.py"
    path.write_text('"""Liger in a docstring is fine."""\n# so is Liger here\nX = "liger-x"\n')
    assert [text for _, text in _code_tokens(path)] == ["X", '"liger-x"']
