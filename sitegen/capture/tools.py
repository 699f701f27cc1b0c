"""Running one tool and keeping what it printed; the error a capture stops with."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

from sitegen.model.problems import printable

TOOL_TIMEOUT_S = 120  # importing torch from a cold disk is the slowest step
CANNOT_RUN = "cannot run it: "  # a ToolOutput's stderr when the program could not be started


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
        """What the tool printed last, on one line, for an error message: cut to 300
        characters, each one that is not printable escaped (a tool's own terminal escapes never
        reach the terminal raw)."""
        text = " ".join((self.stderr.strip() or self.stdout.strip())[:1000].split())[:300]
        return printable(text) or "nothing"


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
    except OSError as error:  # a folder, a file not executable: the tool cannot be run
        reason = (error.strerror or type(error).__name__).lower()
        return ToolOutput(tuple(command), None, "", f"{CANNOT_RUN}{reason}")
    except subprocess.TimeoutExpired:
        return ToolOutput(tuple(command), None, "", f"timed out after {TOOL_TIMEOUT_S} s")
    return ToolOutput(tuple(command), done.returncode, done.stdout, done.stderr)
