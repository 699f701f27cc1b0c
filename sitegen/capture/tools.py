"""Running one tool and keeping what it printed; the error a capture stops with."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

TOOL_TIMEOUT_S = 120  # importing torch from a cold disk is the slowest step


class CaptureError(Exception):
    """The machine cannot be described: no GPU, a tool that failed, a package not installed."""


@dataclass(frozen=True)
class ToolOutput:
    """One command as it ran: `returncode` None when the program was not found or hung."""

    command: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str

    def said(self) -> str:
        """What the tool printed last, on one line, for an error message."""
        text = " ".join((self.stderr.strip() or self.stdout.strip()).split())
        return text[:300] or "nothing"


def run_tool(command: list[str]) -> ToolOutput:
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TOOL_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        return ToolOutput(tuple(command), None, "", "")
    except subprocess.TimeoutExpired:
        return ToolOutput(tuple(command), None, "", f"timed out after {TOOL_TIMEOUT_S} s")
    return ToolOutput(tuple(command), done.returncode, done.stdout, done.stderr)
