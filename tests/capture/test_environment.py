"""`sitegen environment`: the ExecutionEnvironment made from what the tools printed on real
machines (recorded outputs), every failure a clear one-line error, and the standard library only.

Recorded outputs: `measurements/kernelindex-h200/record.json` (the H200 this catalog's runs were
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
from tests.conftest import FIXTURES, REPOSITORY, read_json

H200 = REPOSITORY / "sources" / "liger-h200"
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
