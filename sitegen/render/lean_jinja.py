"""The one module that uses private internals of jinja2 and markupsafe: a leaner code generator
for the templates, and markupsafe's C escaping without its `Markup` wrapper.

Written against the versions in `WRITTEN_FOR` (pinned in pyproject.toml). With any other
version installed, `environment_class` gives stock jinja, so an upgrade can only cost speed.
tests/render/test_lean_jinja.py renders every page of the fixture site both ways and compares
the bytes. What the lean path saves is in docs/performance.md.
"""

from __future__ import annotations

import functools
import keyword
from collections.abc import MutableMapping
from importlib.metadata import version
from typing import Any

from jinja2 import Environment
from jinja2 import Template as JinjaTemplate
from jinja2.compiler import CodeGenerator, Frame
from jinja2.nodes import Call, Expr, Getattr, Name, Template
from jinja2.runtime import Macro

try:  # markupsafe's own C escaping, returning the escaped str itself
    from markupsafe._speedups import _escape_inner as escape_text
except ImportError:  # pragma: no cover - markupsafe built without its C extension
    from markupsafe._native import _escape_inner as escape_text

WRITTEN_FOR = {"jinja2": "3.1.6", "markupsafe": "3.0.4"}


@functools.cache
def lean_available() -> bool:
    """Whether the installed jinja2 and markupsafe are the versions this module was written for."""
    return all(version(name) == wanted for name, wanted in WRITTEN_FOR.items())


def escape_output(value: Any) -> str:
    """`markupsafe.escape` for text going straight into a page, as a plain `str`."""
    if type(value) is str:
        return escape_text(value)
    if hasattr(value, "__html__"):
        return value.__html__()  # type: ignore[no-any-return]
    return escape_text(str(value))


class LeanCodeGenerator(CodeGenerator):
    """jinja's code generator without three costs of its generality:

    - each `{{ … }}` of an autoescaped template is escaped to a plain `str`, not wrapped in a
      `Markup` that is only joined into the page and dropped;
    - `x.name` is Python's attribute access, not `environment.getattr(x, "name")` with its
      fallback to `x["name"]`: templates read named tuples (site/records.py), and a dict's keys
      are not attributes here (`self.block()` is still jinja's);
    - a call is a plain Python call, not `context.call(…)`, which inspects the callee for a
      context argument every time: `check_plain_globals` refuses a global that asks for one.

    Macros, `{% set %}` blocks, filters and tests are jinja's.
    """

    def visit_Template(self, node: Template, frame: Frame | None = None) -> None:
        self.writeline(f"from {__name__} import escape_output, escape_text")
        super().visit_Template(node, frame)

    @staticmethod
    def _escapes_inline(frame: Frame) -> bool:
        # What `_output_child_pre` opens, `_output_child_post` must close: one test for both.
        return not frame.eval_ctx.volatile and frame.eval_ctx.autoescape

    def _output_child_pre(self, node: Expr, frame: Frame, finalize: Any) -> None:
        if not self._escapes_inline(frame):
            super()._output_child_pre(node, frame, finalize)
            return
        # escape_output inlined for the common case, a str.
        self.write("(escape_text(_value) if type(_value := ")
        if finalize.src is not None:
            self.write(finalize.src)

    def _output_child_post(self, node: Expr, frame: Frame, finalize: Any) -> None:
        if not self._escapes_inline(frame):
            super()._output_child_post(node, frame, finalize)
            return
        if finalize.src is not None:
            self.write(")")
        self.write(") is str else escape_output(_value))")

    def visit_Getattr(self, node: Getattr, frame: Frame) -> None:
        own_block = isinstance(node.node, Name) and node.node.name == "self"
        if own_block or self.environment.sandboxed or self.environment.is_async:
            super().visit_Getattr(node, frame)
            return
        if node.attr.isidentifier() and not keyword.iskeyword(node.attr):
            self.visit(node.node, frame)
            self.write(f".{node.attr}")
        else:  # `x.class` is no Python: getattr(x, 'class')
            self.write("getattr(")
            self.visit(node.node, frame)
            self.write(f", {node.attr!r})")

    def visit_Call(self, node: Call, frame: Frame, forward_caller: bool = False) -> None:
        if forward_caller or self.environment.sandboxed or self.environment.is_async:
            super().visit_Call(node, frame, forward_caller=forward_caller)  # {% call %}: `caller`
            return
        # `signature` writes each argument after a comma: `f(*(), a, b)` is `f(a, b)`.
        self.write("(")
        self.visit(node.node, frame)
        self.write(")(*()")
        self.signature(node, frame)
        self.write(")")


class LeanEnvironment(Environment):
    """An environment whose templates never change once loaded (`auto_reload` off, every
    global set before a page template is loaded): each template's globals are one dict, not a
    ChainMap copied on every render, and `get_template` answers from a dict rather than
    jinja's locked, weakly referenced cache (`{% extends %}` calls it on every render)."""

    code_generator_class = LeanCodeGenerator

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._loaded: dict[str | JinjaTemplate, JinjaTemplate] = {}

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        return {**self.globals, **(d or {})}

    def get_template(
        self,
        name: str | JinjaTemplate,
        parent: str | None = None,
        globals: MutableMapping[str, Any] | None = None,
    ) -> JinjaTemplate:
        if parent is not None and isinstance(name, str):
            name = self.join_path(name, parent)
        found = self._loaded.get(name) if globals is None else None
        if found is None:
            found = super().get_template(name, globals=globals)
            if globals is None:
                self._loaded[name] = found
        return found


def environment_class(lean: bool = True) -> type[Environment]:
    """The lean environment where the installed versions allow it, else stock jinja's."""
    return LeanEnvironment if lean and lean_available() else Environment


def check_plain_globals(environment: Environment) -> None:
    """Lean templates call globals as plain functions: refuse one that asks jinja for its
    context. A macro may: called without one, it takes the environment's autoescaping."""
    for name, value in environment.globals.items():
        if isinstance(value, Macro):
            continue
        method = type(value).__call__ if callable(value) else None  # a callable object's
        if hasattr(value, "jinja_pass_arg") or hasattr(method, "jinja_pass_arg"):
            raise TypeError(f"the template global {name!r} asks jinja for its context")
