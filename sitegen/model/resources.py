"""Pydantic models of the kernelindex.dev/v1alpha1 kinds: one class per kind, named as the kind.

Every model is strict (no coercion: `"577632"` is not a number, `true` is not an integer) and
forbids unknown fields. JSON keeps camelCase; Python uses snake_case through one alias rule, so
errors report the name the author typed. Normalisation that identity depends on (durations in
nanoseconds, set-like lists sorted and de-duplicated) happens here, during validation, so a
validated `spec` dumped by alias is exactly what is hashed.

Unlike the other modules, this one (and values.py) does not postpone its annotations (`from
__future__ import annotations`): pydantic would evaluate each string again when it builds the
models, at every start. A validator returning its own model names it in quotes.
"""

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    Field,
    StringConstraints,
    model_validator,
)

from sitegen.model.digest import API_VERSION
from sitegen.model.text import check_line
from sitegen.model.values import (
    MAX_AXES,
    MAX_ITEMS,
    MAX_LABELS,
    MAX_RANK,
    MAX_SAMPLES,
    MAX_TENSORS,
    TOKEN_PATTERN,
    Commit,
    Digest,
    Duration,
    Expression,
    FiniteNumber,
    Instant,
    Line,
    LongText,
    MeasuredValue,
    Model,
    Name,
    NonNegativeInt,
    NonNegativeNumber,
    PositiveInt,
    ShortText,
    Slug,
    TextSet,
    Token,
    TokenSet,
    Url,
    at_most,
)

# --- metadata -----------------------------------------------------------------------------------

LabelKey = Annotated[str, StringConstraints(pattern=TOKEN_PATTERN, max_length=63)]


class Author(Model):
    name: ShortText | None = None
    github: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9-]{1,39}$")] | None = None


class SourceRef(Model):
    url: Url


class Metadata(Model):
    """Editorial fields: never part of identity. `name` is not unique."""

    name: Name
    title: ShortText | None = None
    description: LongText | None = None
    labels: Annotated[dict[LabelKey, Line], at_most(MAX_LABELS, "labels")] | None = None
    authors: Annotated[list[Author], at_most(MAX_ITEMS, "authors")] | None = None
    source_refs: Annotated[list[SourceRef], at_most(MAX_ITEMS, "source references")] | None = None


# --- OperationSpec ------------------------------------------------------------------------------


class Axis(Model):
    role: Literal["variable", "constant", "derived"]
    type: Literal["integer"]
    value: int | None = None
    minimum: int | None = None
    maximum: int | None = None
    expression: Expression | None = None

    @model_validator(mode="after")
    def _role_needs(self) -> "Axis":
        if self.role == "constant" and self.value is None:
            raise ValueError("a constant axis needs a value")
        if self.role == "derived" and self.expression is None:
            raise ValueError("a derived axis needs an expression")
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            raise ValueError("minimum is greater than maximum")
        return self


class TensorSignature(Model):
    shape: Annotated[list[Annotated[int, Field(ge=0)] | Token], at_most(MAX_RANK, "dimensions")]
    dtype: Token
    layout: ShortText | None = None


class ScalarSignature(Model):
    dtype: Token


class Operand(Model):
    name: Token
    tensor: TensorSignature | None = None
    scalar: ScalarSignature | None = None

    @model_validator(mode="after")
    def _tensor_or_scalar(self) -> "Operand":
        if (self.tensor is None) == (self.scalar is None):
            raise ValueError("an operand is exactly one of tensor or scalar")
        return self


class Semantics(Model):
    expression: LongText | None = None
    mutation: Literal["none", "in_place", "destination"]
    determinism: Literal["deterministic", "nondeterministic", "unspecified"]


class OperationSpecSpec(Model):
    family: Slug
    axes: Annotated[dict[Token, Axis], at_most(MAX_AXES, "axes")]
    inputs: Annotated[list[Operand], Field(min_length=1), at_most(MAX_TENSORS, "inputs")]
    outputs: Annotated[list[Operand], Field(min_length=1), at_most(MAX_TENSORS, "outputs")]
    semantics: Semantics
    reference: LongText | None = None

    @model_validator(mode="after")
    def _shapes_name_declared_axes(self) -> "OperationSpecSpec":
        for operand in [*self.inputs, *self.outputs]:
            if operand.tensor is None:
                continue
            for dim in operand.tensor.shape:
                if isinstance(dim, str) and dim not in self.axes:
                    raise ValueError(f"operand {operand.name!r} uses undeclared axis {dim!r}")
        names = [operand.name for operand in self.inputs] + [o.name for o in self.outputs]
        if len(names) != len(set(names)):
            raise ValueError("operand names repeat")
        return self


# --- WorkloadCase -------------------------------------------------------------------------------


class TensorCase(Model):
    shape: Annotated[list[NonNegativeInt], at_most(MAX_RANK, "dimensions")]
    dtype: Token
    strides: Annotated[list[int], at_most(MAX_RANK, "strides")] | None = None
    alignment_bytes: PositiveInt | None = None
    data: Token | None = None  # how values were generated, e.g. `randn`

    @model_validator(mode="after")
    def _strides_match_shape(self) -> "TensorCase":
        if self.strides is not None and len(self.strides) != len(self.shape):
            raise ValueError("strides and shape differ in length")
        return self


class ScalarCase(Model):
    dtype: Token
    value: FiniteNumber | bool


class WorkloadCorrectness(Model):
    comparator: Token
    max_absolute_error: NonNegativeNumber | None = None
    max_relative_error: NonNegativeNumber | None = None
    required_matched_ratio: Annotated[float, Field(ge=0, le=1)] | None = None
    nan_policy: Token | None = None
    infinity_policy: Token | None = None


class WorkloadCaseSpec(Model):
    operation_spec_digest: Digest
    axes: Annotated[dict[Token, int], at_most(MAX_AXES, "axes")]
    tensors: Annotated[dict[Token, TensorCase], at_most(MAX_TENSORS, "tensors")]
    scalars: Annotated[dict[Token, ScalarCase], at_most(MAX_TENSORS, "scalars")] | None = None
    correctness: WorkloadCorrectness


# --- SoftwareProject ----------------------------------------------------------------------------


class Host(Model):
    kind: Literal["github", "huggingface", "gitlab", "other"]
    id: ShortText


class Package(Model):
    ecosystem: Token  # pypi, npm, conda …
    name: ShortText


class SoftwareProjectSpec(Model):
    name: ShortText
    kind: Literal["library", "individual", "vendor"] | None = None
    repository: Url | None = None
    homepage: Url | None = None
    host: Host | None = None
    packages: Annotated[list[Package], at_most(MAX_ITEMS, "packages")] | None = None


# --- ImplementationRevision ---------------------------------------------------------------------


class ProjectRevision(Model):
    repository: Url | None = None
    commit: Commit | None = None
    version: ShortText | None = None
    tree_digest: Digest | None = None


class OperationRef(Model):
    spec_digest: Digest


class Callable(Model):
    language: Token
    path: ShortText | None = None
    symbol: ShortText | None = None
    interface: ShortText | None = None


class Support(Model):
    hardware_architectures: TokenSet
    dtypes: TokenSet
    products_tested: TextSet | None = None
    axes: Annotated[TokenSet, at_most(MAX_AXES, "axes")] | None = None
    layouts: TextSet | None = None


class SourceLocation(Model):
    repository: Url
    commit: Commit | None = None
    path: ShortText | None = None


class Install(Model):
    kind: Literal["git", "pip", "package", "container", "source"]
    repository: Url | None = None
    commit: Commit | None = None
    package: ShortText | None = None
    version: ShortText | None = None
    command: LongText | None = None


class BuildVariant(Model):
    name: ShortText
    install: Install
    requirements: Annotated[list[ShortText], at_most(MAX_ITEMS, "requirements")] | None = None


class Licensing(Model):
    declared: ShortText | None = None
    concluded: ShortText | None = None
    evidence: LongText | None = None


class ImplementationRevisionSpec(Model):
    project_revision: ProjectRevision
    operation: OperationRef
    callable: Callable
    support: Support
    source: SourceLocation | None = None
    build_variants: Annotated[list[BuildVariant], at_most(MAX_ITEMS, "build variants")] | None = (
        None
    )
    licensing: Licensing


# --- BenchmarkProtocol --------------------------------------------------------------------------


class Harness(Model):
    name: ShortText
    version: ShortText | None = None
    repository: Url | None = None
    commit: Commit | None = None


class Measurement(Model):
    timer: Token
    primary_statistic: Token
    synchronization: Token | None = None
    compile_included: bool | None = None
    setup_included: bool | None = None
    warmup_iterations: NonNegativeInt | None = None
    warmup_duration: Duration | None = None
    measured_iterations: PositiveInt | None = None
    samples: PositiveInt | None = None
    input_regeneration: Token | None = None
    outlier_policy: ShortText | None = None


class Comparability(Model):
    family: Token
    notes: LongText | None = None


class BenchmarkProtocolSpec(Model):
    harness: Harness
    measurement: Measurement
    correctness: LongText | None = None
    device_policy: LongText | None = None
    comparability: Comparability | None = None


# --- ExecutionEnvironment -----------------------------------------------------------------------


class Hardware(Model):
    vendor: Token
    product: ShortText
    architecture: Token
    form_factor: ShortText | None = None
    memory_bytes: PositiveInt | None = None
    count: PositiveInt | None = None
    interconnect: ShortText | None = None


class NamedVersion(Model):
    name: ShortText
    version: ShortText


class Software(Model):
    operating_system: ShortText | None = None
    kernel: ShortText | None = None
    driver: ShortText | None = None
    cuda_toolkit: ShortText | None = None
    compiler: ShortText | None = None
    framework: NamedVersion | None = None
    libraries: Annotated[list[NamedVersion], at_most(MAX_ITEMS, "libraries")] | None = None


SettingValue = Line | bool | int | FiniteNumber


class ExecutionEnvironmentSpec(Model):
    hardware: Hardware
    software: Software
    settings: Annotated[dict[Token, SettingValue], at_most(MAX_ITEMS, "settings")] | None = None
    image_digest: Digest | None = None


# --- BenchmarkRun -------------------------------------------------------------------------------

RunStatus = Literal[
    "passed",
    "incorrect_shape",
    "incorrect_dtype",
    "incorrect_numerical",
    "compile_error",
    "runtime_error",
    "timeout",
    "resource_exceeded",
    "invalid_reference",
    "policy_violation",
    "suspected_reward_hack",
    "incomplete_evidence",
    "revoked",
]


class LatencyNs(Model):
    median: Duration | None = None
    mean: Duration | None = None
    p05: Duration | None = None
    p95: Duration | None = None
    minimum: Duration | None = None
    maximum: Duration | None = None
    mad: Duration | None = None
    confidence95: Annotated[list[Duration], Field(min_length=2, max_length=2)] | None = None

    @model_validator(mode="after")
    def _centre_required(self) -> "LatencyNs":
        if self.median is None and self.mean is None:
            raise ValueError("latencyNs needs a median or a mean")
        return self


class Timing(Model):
    primary_statistic: Token
    samples: PositiveInt | None = None
    latency_ns: LatencyNs
    raw_samples: Annotated[list[Duration], at_most(MAX_SAMPLES, "samples")] | None = None


class RunMeasurement(Model):
    metric: Token
    unit: Token
    statistic: Token
    value: MeasuredValue
    sample_count: PositiveInt | None = None


class SourceNative(Model):
    source: Slug
    benchmark: ShortText | None = None
    external_id: (
        Annotated[str, StringConstraints(min_length=1, max_length=500), AfterValidator(check_line)]
        | None
    ) = None
    metrics: Annotated[dict[Token, FiniteNumber], at_most(MAX_ITEMS, "metrics")] | None = None


class RunCorrectness(Model):
    checked: bool
    comparator: Token | None = None
    max_absolute_error: NonNegativeNumber | None = None
    max_relative_error: NonNegativeNumber | None = None
    notes: LongText | None = None


class Evidence(Model):
    log_url: Url | None = None
    artifact_digest: Digest | None = None
    notes: LongText | None = None


class BenchmarkRunSpec(Model):
    implementation_digest: Digest
    workload_digest: Digest
    protocol_digest: Digest
    environment_digest: Digest
    status: RunStatus
    correctness: RunCorrectness | None = None
    timing: Timing | None = None
    measurements: Annotated[list[RunMeasurement], at_most(MAX_ITEMS, "measurements")] | None = None
    source_native: SourceNative | None = None
    evidence: Evidence | None = None
    observed_at: Instant


# --- the envelope -------------------------------------------------------------------------------


class Resource(Model):
    """The four-key envelope shared by every kind."""

    api_version: Literal["kernelindex.dev/v1alpha1"]
    metadata: Metadata
    # Each kind narrows `kind` and `spec`; `references` names its digest fields and target kinds.
    references: ClassVar[dict[tuple[str, ...], str]] = {}

    def spec_json(self) -> dict[str, Any]:
        """The spec exactly as hashed: aliases, normalised values, absent keys absent."""
        return self.document_json()["spec"]  # type: ignore[no-any-return]

    def document_json(self) -> dict[str, Any]:
        """The whole resource, normalised, in the canonical key order of the format."""
        dumped = self.model_dump(mode="json", exclude_unset=True)
        return {
            "apiVersion": API_VERSION,
            "kind": dumped["kind"],
            "metadata": dumped["metadata"],
            "spec": dumped["spec"],
        }


class OperationSpec(Resource):
    kind: Literal["OperationSpec"]
    spec: OperationSpecSpec


class WorkloadCase(Resource):
    kind: Literal["WorkloadCase"]
    spec: WorkloadCaseSpec
    references: ClassVar[dict[tuple[str, ...], str]] = {
        ("spec", "operationSpecDigest"): "OperationSpec",
    }


class SoftwareProject(Resource):
    kind: Literal["SoftwareProject"]
    spec: SoftwareProjectSpec


class ImplementationRevision(Resource):
    kind: Literal["ImplementationRevision"]
    spec: ImplementationRevisionSpec
    references: ClassVar[dict[tuple[str, ...], str]] = {
        ("spec", "operation", "specDigest"): "OperationSpec",
    }


class BenchmarkProtocol(Resource):
    kind: Literal["BenchmarkProtocol"]
    spec: BenchmarkProtocolSpec


class ExecutionEnvironment(Resource):
    kind: Literal["ExecutionEnvironment"]
    spec: ExecutionEnvironmentSpec


class BenchmarkRun(Resource):
    kind: Literal["BenchmarkRun"]
    spec: BenchmarkRunSpec
    references: ClassVar[dict[tuple[str, ...], str]] = {
        ("spec", "implementationDigest"): "ImplementationRevision",
        ("spec", "workloadDigest"): "WorkloadCase",
        ("spec", "protocolDigest"): "BenchmarkProtocol",
        ("spec", "environmentDigest"): "ExecutionEnvironment",
    }


KINDS: dict[str, type[Resource]] = {
    model.__name__: model
    for model in (
        OperationSpec,
        WorkloadCase,
        SoftwareProject,
        ImplementationRevision,
        BenchmarkProtocol,
        ExecutionEnvironment,
        BenchmarkRun,
    )
}


def reference_values(kind: str, spec: dict[str, Any]) -> tuple[str, ...]:
    """The digest at each of `KINDS[kind].references`' paths of a normalised spec, in order."""
    found = []
    for location in KINDS[kind].references:
        value: Any = {"spec": spec}
        for step in location:
            value = value[step]
        found.append(value)
    return tuple(found)


def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of each kind, as pydantic describes it, by kind name: what
    model/schemas/ ships (tests/model/test_resources.py checks the two agree)."""
    return {kind: model.model_json_schema(by_alias=True) for kind, model in sorted(KINDS.items())}
