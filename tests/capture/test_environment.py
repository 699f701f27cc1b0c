"""`sitegen environment`: the ExecutionEnvironment made from what the tools printed on real
machines (recorded outputs), every failure a clear one-line error, and the standard library only.

Recorded outputs: `sources/liger-h200/record.json` (the H200 this catalog's runs were
measured on, by `sitegen environment --record`), `tests/fixtures/capture/no-gpu.json` (a machine
without an NVIDIA driver, likewise) and `tests/fixtures/capture/nvidia-smi-h200.json` (nvidia-smi's
answers to other queries on that H200).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sitegen.capture.environment import describe
from sitegen.capture.nvidia_smi import read_gpus
from sitegen.capture.python_probe import read_python
from sitegen.capture.record import Record, record_from_json, record_json
from sitegen.capture.tools import CaptureError, ToolOutput
from sitegen.cli import main
from sitegen.content.documents import validate_resource
from tests.conftest import FIXTURES, REPOSITORY, SOURCES, read_json

H200 = SOURCES / "liger-h200"
CAPTURE = FIXTURES / "capture"
LIBRARIES = ["liger-kernel", "transformers"]  # what the H200 runs were captured with


def recorded(path: Path) -> Record:
    return record_from_json(read_json(path))


def tool(name: str) -> ToolOutput:
    """One of nvidia-smi's recorded answers on the H200."""
    case = read_json(CAPTURE / "nvidia-smi-h200.json")[name]
    return ToolOutput(tuple(case["command"]), case["returncode"], case["stdout"], case["stderr"])


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


# --- from the recorded outputs --------------------------------------------------------------------


def test_the_h200_record_gives_the_committed_environment() -> None:
    record = recorded(H200 / "record.json")
    capture = describe(record, LIBRARIES, name="kernelindex-h200")
    printed = json.dumps(capture.document, indent=2, ensure_ascii=False) + "\n"
    assert printed == (H200 / "environment.json").read_text(encoding="utf-8")
    assert capture.notes == ()
    spec = capture.document["spec"]
    assert spec["hardware"] == {
        "vendor": "nvidia",
        "product": "NVIDIA H200",
        "architecture": "sm_90",  # compute capability 9.0
        "memoryBytes": 143771 * 2**20,
    }
    assert spec["software"]["driver"] == "580.159.04"
    assert spec["software"]["cudaToolkit"] == "13.0"
    assert spec["software"]["framework"] == {"name": "torch", "version": "2.11.0"}
    assert spec["software"]["libraries"] == {
        "liger_kernel": "0.8.5",
        "python": "3.12.3",
        "transformers": "5.17.0",
        "triton": "3.6.0",
    }


def test_the_environment_printed_is_a_valid_resource() -> None:
    capture = describe(recorded(H200 / "record.json"), LIBRARIES)
    problems: list[Any] = []
    loaded = validate_resource(capture.document, "environment.json", "", problems)
    assert loaded is not None and not problems
    assert capture.document["metadata"]["name"] == "nvidia-h200"  # the default: the GPU's name
    assert capture.document["metadata"]["title"] == (
        "NVIDIA H200 · driver 580.159.04 · CUDA 13.0 · torch 2.11.0"
    )


def test_a_record_survives_its_json() -> None:
    data = read_json(H200 / "record.json")
    assert record_json(record_from_json(data)) == data


def test_a_machine_without_a_driver_is_a_clear_error() -> None:
    record = recorded(CAPTURE / "no-gpu.json")
    with pytest.raises(CaptureError) as raised:
        describe(record, [])
    assert str(raised.value) == (
        "nvidia-smi: not found on PATH, so this machine has no NVIDIA driver to describe; "
        "run sitegen environment on the machine that measured"
    )


def test_nvidia_smi_finding_no_gpu_is_a_clear_error() -> None:
    with pytest.raises(
        CaptureError, match=r"^nvidia-smi failed \(exit 6\): No devices were found$"
    ):
        read_gpus(tool("no-such-gpu"))


def test_a_field_the_driver_does_not_know_is_a_clear_error() -> None:
    expected = (
        r'^nvidia-smi failed \(exit 2\): Field "no_such_field" is not a valid field to query\.$'
    )
    with pytest.raises(CaptureError, match=expected):
        read_gpus(tool("invalid-field"))


def test_output_with_a_header_and_units_is_not_misread() -> None:
    with pytest.raises(CaptureError, match=r"^nvidia-smi: unexpected line 'index, name, "):
        read_gpus(tool("query-with-header"))


def test_torch_names_the_gpu_as_nvidia_smi_does() -> None:
    """Why an environment describes a CSV's rows when its product is their gpu_name: the
    benchmark writes torch.cuda.get_device_name(), nvidia-smi prints the same name."""
    assert "'NVIDIA H200' (9, 0)" in tool("torch").stdout
    (gpu,) = read_gpus(recorded(H200 / "record.json").nvidia_smi)
    assert (gpu.name, gpu.architecture) == ("NVIDIA H200", "sm_90")


def test_a_python_without_torch_records_no_framework() -> None:
    reading = read_python(recorded(CAPTURE / "no-gpu.json").python)
    assert reading.packages == {"torch": None, "triton": None, "liger-kernel": None}
    h200 = recorded(H200 / "record.json")
    # The H200's GPU with the torch-less Python of the machine without one.
    record = dataclasses.replace(h200, python=recorded(CAPTURE / "no-gpu.json").python)
    capture = describe(record, [])
    software = capture.document["spec"]["software"]
    assert "framework" not in software and "cudaToolkit" not in software
    assert software["libraries"] == {"python": "3.11.7"}
    interpreter = record.python.command[0]
    assert capture.notes == (
        f"torch: not installed in {interpreter}: framework not recorded",
        f"triton: not installed in {interpreter}: not recorded",
    )
    with pytest.raises(CaptureError, match=r"^--library liger-kernel: not installed in "):
        describe(record, ["liger-kernel"])


def test_fields_nvidia_smi_does_not_report_are_left_out() -> None:
    h200 = recorded(H200 / "record.json")
    blank = h200.nvidia_smi.stdout.replace("143771", "[N/A]").replace("580.159.04", "[N/A]")
    record = dataclasses.replace(
        h200, nvidia_smi=dataclasses.replace(h200.nvidia_smi, stdout=blank)
    )
    capture = describe(record, LIBRARIES)
    assert "memoryBytes" not in capture.document["spec"]["hardware"]
    assert "driver" not in capture.document["spec"]["software"]
    assert capture.notes == (
        "nvidia-smi reports no memory.total for GPU 0: not recorded",
        "nvidia-smi reports no driver version for GPU 0: not recorded",
    )
    no_capability = h200.nvidia_smi.stdout.replace(", 9.0", ", [N/A]")
    record = dataclasses.replace(
        h200, nvidia_smi=dataclasses.replace(h200.nvidia_smi, stdout=no_capability)
    )
    with pytest.raises(CaptureError, match=r"the architecture \(e\.g\. sm_90\) cannot be read"):
        describe(record, LIBRARIES)


def test_usage_mistakes_are_clear_errors() -> None:
    record = recorded(H200 / "record.json")
    with pytest.raises(CaptureError, match=r"^--gpu 1: nvidia-smi lists GPU 0$"):
        describe(record, LIBRARIES, gpu_index=1)
    with pytest.raises(CaptureError, match=r"^--name 'My H200': not a resource name"):
        describe(record, LIBRARIES, name="My H200")


# --- the command, with the recorded outputs played by stand-in tools ------------------------------


def stand_in(folder: Path, name: str, output: ToolOutput) -> Path:
    """An executable that prints what `output` recorded and exits as it did."""
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.out").write_text(output.stdout)
    (folder / f"{name}.err").write_text(output.stderr)
    path = folder / name
    path.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.stdout.write(open({str(path) + '.out'!r}).read())\n"
        f"sys.stderr.write(open({str(path) + '.err'!r}).read())\n"
        f"sys.exit({output.returncode})\n"
    )
    path.chmod(0o755)
    return path


def test_the_command_prints_the_environment_and_records_the_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h200 = recorded(H200 / "record.json")
    tools = tmp_path / "bin"
    stand_in(tools, "nvidia-smi", h200.nvidia_smi)
    python = stand_in(tools, "python", h200.python)
    monkeypatch.setenv("PATH", str(tools))
    argv = ["environment", "--python", str(python), "--name", "kernelindex-h200"]
    status, out, err = run_cli(
        [
            *argv,
            *(f"--library={lib}" for lib in LIBRARIES),
            "--record",
            str(tmp_path / "record.json"),
        ]
    )
    assert (status, err) == (0, "")
    printed = json.loads(out)
    expected = read_json(H200 / "environment.json")
    # Everything but the operating system and kernel, which are this machine's.
    for software in (printed["spec"]["software"], expected["spec"]["software"]):
        software.pop("operatingSystem", None)
        software.pop("kernel")
    assert printed == expected
    saved = read_json(tmp_path / "record.json")
    assert saved["nvidia_smi"]["stdout"] == h200.nvidia_smi.stdout


def test_the_command_on_a_machine_without_a_gpu_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi anywhere
    status, out, err = run_cli(["environment"])
    assert (status, out) == (2, "")
    assert err == (
        "sitegen environment: nvidia-smi: not found on PATH, so this machine has no NVIDIA "
        "driver to describe; run sitegen environment on the machine that measured\n"
    )


BLOCKED = (
    "pydantic",
    "pydantic_core",
    "orjson",
    "rfc8785",
    "plotly",
    "watchfiles",
    "jinja2",
    "markupsafe",
    "markdown_it",
    "annotated_types",
)
WITHOUT_DEPENDENCIES = f"""
import importlib.abc, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ImportError("not on the GPU machine: " + name)
sys.meta_path.insert(0, Refuse())
from sitegen.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_the_command_needs_only_the_standard_library(tmp_path: Path) -> None:
    """The GPU machine has the benchmark's Python only: no pydantic, orjson, rfc8785, plotly …"""
    h200 = recorded(H200 / "record.json")
    stand_in(tmp_path, "nvidia-smi", h200.nvidia_smi)
    environment = {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(REPOSITORY)}
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_DEPENDENCIES, "environment", "--library", "pip"],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["spec"]["hardware"]["product"] == "NVIDIA H200"


def test_the_command_line_loads_the_standard_library_only_for_environment() -> None:
    """A GPU machine may have only the benchmark installed: `sitegen environment` must not need
    pydantic, orjson, jinja or anything else a build uses (each command imports its stages in
    its handler)."""
    probe = (
        "import sys\n"
        "from sitegen.cli import build_parser\n"
        "build_parser().parse_args(['environment'])\n"
        "heavy = {'pydantic', 'pydantic_core', 'orjson', 'jinja2', 'markupsafe', 'markdown_it'}\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPOSITORY
    )
    assert result.stdout.strip() == ""


# --- hostile tool output: what is printed always checks, or the command fails in one line ---------


def _with_gpu_line(line: str) -> Record:
    h200 = recorded(H200 / "record.json")
    smi = dataclasses.replace(h200.nvidia_smi, stdout=line + "\n")
    return dataclasses.replace(h200, nvidia_smi=smi)


def _with_probe(stdout: str) -> Record:
    h200 = recorded(H200 / "record.json")
    return dataclasses.replace(h200, python=dataclasses.replace(h200.python, stdout=stdout))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "0, NVIDIA\0H200, 143771, 570.86.15, 9.0",
            "nvidia-smi: GPU 0's name holds the control character U+0000 at character 7: "
            "'NVIDIA\\x00H200'",
        ),
        (
            "0, NVIDIA \x1b[2JH200, 143771, 570.86.15, 9.0",
            "nvidia-smi: GPU 0's name holds the control character U+001B at character 8: "
            "'NVIDIA \\x1b[2JH200'",
        ),
        (
            "0, NVIDIA \u202eH200, 143771, 570.86.15, 9.0",
            "nvidia-smi: GPU 0's name holds the bidirectional control U+202E at character 8: "
            "'NVIDIA \\u202eH200'",
        ),
        (
            f"0, {'H' * 201}, 143771, 570.86.15, 9.0",
            f"nvidia-smi: GPU 0's name is 201 characters, over the limit of 200: '{'H' * 99}…'",
        ),
        (
            "0, NVIDIA H200, 100000000000000000000, 570.86.15, 9.0",
            "nvidia-smi: GPU 0's memory.total of 100000000000000000000 MiB is out of range "
            "(1 to 8,589,934,591 MiB: 2^53 bytes)",
        ),
        (
            "0, NVIDIA H200, 0, 570.86.15, 9.0",
            "nvidia-smi: GPU 0's memory.total of 0 MiB is out of range "
            "(1 to 8,589,934,591 MiB: 2^53 bytes)",
        ),
        (
            "², NVIDIA H200, 143771, 570.86.15, 9.0",
            "nvidia-smi: unexpected line '², NVIDIA H200, 143771, 570.86.15, 9.0'",
        ),
        (
            "0, NVIDIA H200, ²³, 570.86.15, 9.0",
            "nvidia-smi: GPU 0's memory.total is not a number of MiB: '²³'",
        ),
        (
            f"0, NVIDIA H200, 143771, {'5' * 131_073}, 9.0",
            "nvidia-smi: output that is not CSV: field larger than field limit (131072)",
        ),
        (
            "0, ---, 143771, 570.86.15, 9.0",
            "nvidia-smi: GPU 0's name '---' gives no resource name; hint: pass one with --name",
        ),
    ],
)
def test_a_gpu_nvidia_smi_describes_oddly_is_a_one_line_error(line: str, message: str) -> None:
    with pytest.raises(CaptureError) as raised:
        describe(_with_gpu_line(line), LIBRARIES)
    assert str(raised.value) == message


def _probe(python: str = "3.12.3", cuda: str | None = "12.8", version: str = "0.6.0") -> str:
    packages = {"torch": "2.7.0", "triton": "3.3.0", "liger-kernel": version, "transformers": "4"}
    return json.dumps({"python": python, "packages": packages, "torchCuda": cuda}) + "\n"


@pytest.mark.parametrize(
    ("stdout", "message"),
    [
        (
            _probe(python="3.12\x1b]0;owned\x07"),
            "the probe reports Python's version that holds the control character U+001B at "
            "character 5: '3.12\\x1b]0;owned\\x07'",
        ),
        (
            _probe(cuda=""),
            "the probe reports torch's CUDA that is empty: ''",
        ),
        (
            _probe(version="1" * 300),
            f"the probe reports liger-kernel's version that is 300 characters, over the limit "
            f"of 200: '{'1' * 99}…'",
        ),
        ("[" * 100_000 + "]" * 100_000 + "\n", "unexpected probe output: " + "[" * 300),
    ],
)
def test_versions_the_probe_reports_oddly_are_a_one_line_error(stdout: str, message: str) -> None:
    record = _with_probe(stdout)
    with pytest.raises(CaptureError) as raised:
        describe(record, LIBRARIES)
    assert str(raised.value) == f"--python {record.python.command[0]}: {message}"


def test_what_is_printed_always_checks(tmp_path: Path) -> None:
    """The net: a field no reading checks (the operating system's name) fails the command
    rather than print a resource `check` refuses; one that passes is a valid resource."""
    h200 = recorded(H200 / "record.json")
    long_name = "0, " + "NVIDIA H200 " * 16 + ", 143771, 580.159.04, 9.0"  # a 191-character name
    problems: list[Any] = []
    document = describe(_with_gpu_line(long_name), LIBRARIES).document
    assert len(document["metadata"]["title"]) == 200, "a title made of facts is cut to fit"
    assert validate_resource(document, "environment.json", "", problems) and not problems
    odd = dataclasses.replace(h200, os_release="PRETTY_NAME='Ubuntu \u202e 24.04'\n")
    with pytest.raises(CaptureError) as raised:
        describe(odd, LIBRARIES)
    assert str(raised.value) == (
        "/etc/os-release: spec.software.operatingSystem holds the bidirectional control U+202E "
        "at character 8: 'Ubuntu \\u202e 24.04'; nothing was printed"
    )
    with pytest.raises(CaptureError) as raised:
        describe(h200, LIBRARIES, title="A\tB")
    assert str(raised.value) == "--title holds the control character U+0009 at character 2: 'A\\tB'"


def test_escapes_nvidia_smi_prints_never_reach_the_terminal_raw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = ToolOutput(("nvidia-smi",), 9, "", "\x1b]0;owned\x07\x1b[2J failed\n")
    stand_in(tmp_path / "bin", "nvidia-smi", failing)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    status, out, err = run_cli(["environment"])
    assert (status, out) == (2, "")
    assert (
        err
        == "sitegen environment: nvidia-smi failed (exit 9): \\x1b]0;owned\\x07\\x1b[2J failed\n"
    )


@pytest.mark.parametrize("python", ["folder", "README.md"])
def test_a_python_that_cannot_be_run_gets_a_hint_about_python(
    python: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h200 = recorded(H200 / "record.json")
    stand_in(tmp_path / "bin", "nvidia-smi", h200.nvidia_smi)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    (tmp_path / "folder").mkdir()
    (tmp_path / "README.md").write_text("# not a program\n")
    status, out, err = run_cli(["environment", "--python", str(tmp_path / python)])
    assert (status, out) == (2, "")
    assert err == (
        f"sitegen environment: --python {tmp_path / python}: cannot run it: permission denied; "
        "hint: pass the Python that ran the benchmark, e.g. --python .venv/bin/python\n"
    )
