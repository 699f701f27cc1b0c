"""What the site reads of Liger's conventions (sitegen/importers/liger/conventions.py)."""

from __future__ import annotations

from sitegen.content.run_summary import Shape
from sitegen.importers.liger import conventions
from sitegen.importers.liger.providers import PROVIDERS


def test_the_case_key_inside_an_external_id_is_found_by_its_form() -> None:
    external = "layer_norm/backward/liger/nvidia-h100/hidden16384-rows4096-fp32/2025-07-17"
    source = conventions.SOURCE
    assert conventions.shape_of(source, external) == Shape(
        (("hidden", 16384), ("rows", 4096)), "fp32", ()
    )
    memory = "a/b/memory/x/seq128-bf16"
    assert conventions.shape_of(f"{source}-cutile", memory) == Shape((("seq", 128),), "bf16", ())
    assert conventions.shape_of(source, "layer_norm/backward/liger") is None
    assert conventions.shape_of(source, "") is None
    assert conventions.shape_of("someone-else", external) is None, "only Liger's runs"


def test_every_provider_names_its_project_longest_suffix_first() -> None:
    for name, provider in PROVIDERS.items():
        implementation = f"liger-bench-rms-norm-{name.replace('_', '-')}"
        assert conventions.project_of(implementation) == provider.project, name
    assert conventions.project_of("liger-bench-fused-add-rms-norm-liger-rms-norm") == (
        "liger-kernel"
    )
    assert conventions.project_of("torch") is None, "not a Liger implementation name"


def test_liger_runs_are_credited_with_the_upstream_licence() -> None:
    found = conventions.attribution("liger-kernel-bench-cutedsl")
    assert found is not None and found.licence == "BSD-2-Clause"
    assert "LinkedIn" in found.copyright
    assert conventions.attribution("kernelbench") is None


def test_the_release_is_the_liger_version_label_of_our_runs_only() -> None:
    from sitegen.importers.liger.conventions import release
    from sitegen.importers.registry import release_of

    assert release("liger-kernel-bench", {"liger_version": "0.6.0"}) == "0.6.0"
    assert release("liger-kernel-scripts-kernelindex-h200", {"liger_version": "0.8.5"}) == "0.8.5"
    assert release("liger-kernel-bench", {"role": "baseline"}) is None
    assert release("someone-else", {"liger_version": "0.6.0"}) is None  # not ours to read
    assert release_of("liger-kernel-bench-cutile", {"liger_version": "0.8.0"}) == "0.8.0"
    assert release_of("someone-else", {"liger_version": "0.6.0"}) is None
