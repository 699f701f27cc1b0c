"""Pydantic models of the kernelindex.dev/v1alpha1 kinds: one class per kind, named as the kind,
accepting exactly what kernelindex.dev's schema accepts (docs/format.md), within the limits
sitegen adds on how much one resource may hold (docs/checking.md).

Every model is strict (no coercion: `"577632"` is not a number, `true` is not an integer) and
forbids unknown fields. JSON keeps camelCase; Python uses snake_case through one alias rule, so
errors report the name the author typed. Normalisation that identity depends on (durations in
nanoseconds, set-like lists sorted and de-duplicated) happens here, during validation, so a
validated `spec` dumped by alias is exactly what is hashed. What the schema allows but a reader
should look at again (a derived axis outside the grammar, strides that do not match a shape)
is a warning: `Resource.warnings()`.

Unlike the other modules, this one (and values.py) does not postpone its annotations (`from
__future__ import annotations`): pydantic would evaluate each string again when it builds the
models, at every start. A validator returning its own model names it in quotes.
"""

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, StringConstraints, model_validator

from sitegen.model.digest import API_VERSION
from sitegen.model.values import (
    MAX_AXES,
    MAX_CASES,
    MAX_ITEMS,
    MAX_LABELS,
    MAX_RANK,
    MAX_TENSORS,
    Commit,
    Digest,
    Duration,
    Expression,
    FiniteNumber,
    Instant,
    Integer,
    MeasuredValue,
    Model,
    Name,
    NonNegativeInt,
    NonNegativeNumber,
    PositiveInt,
    Slug,
    Text50Set,
    Text100,
    Text100Set,
    Text200,
    Text200Set,
    Text500,
    Text1000,
    Text2000,
    Token,
    TokenSet,
    Url,
    at_most,
    check_expression,
)

# A warning a resource's own content earns: its JSON path inside the resource, and the message.
Warning_ = tuple[str, str]

# --- shared shapes -------------------------------------------------------------------------------


class ArtifactRef(Model):
    """An immutable artifact: where it is, and the digest of its bytes (never a bare URL)."""

    uri: Text2000
    digest: Digest


PositiveNumber = Annotated[int, Field(gt=0)] | Annotated[float, Field(gt=0, allow_inf_nan=False)]
Ratio = Annotated[int, Field(ge=0, le=1)] | Annotated[float, Field(ge=0, le=1)]

# --- metadata -------------------------------------------------------------------------------------


class Author(Model):
    name: Text200 | None = None
    github: Text100 | None = None


class SourceRef(Model):
    url: Url


class Metadata(Model):
    """Editorial fields: never part of identity. `name` is not unique."""

    name: Name
    title: Text200 | None = None
    description: Text2000 | None = None
    labels: Annotated[dict[Token, Text200], at_most(MAX_LABELS, "labels")] | None = None
    authors: Annotated[list[Author], at_most(MAX_ITEMS, "authors")] | None = None
    source_refs: Annotated[list[SourceRef], at_most(MAX_ITEMS, "source references")] | None = None


# --- OperationSpec --------------------------------------------------------------------------------


class Axis(Model):
    role: Literal["variable", "constant", "derived"]
    type: Literal["integer"]
    value: Integer | None = None
    minimum: Integer | None = None
    maximum: Integer | None = None
    expression: Expression | None = None

    @model_validator(mode="after")
    def _role_needs(self) -> "Axis":
        if self.role == "constant" and self.value is None:
            raise ValueError("a constant axis needs a value")
        if self.role == "derived" and self.expression is None:
            raise ValueError("a derived axis needs an expression")
        return self


Layout = Literal["row_major", "col_major", "contiguous", "strided"]
Dimension = NonNegativeInt | Token


class TensorSignature(Model):
    shape: Annotated[list[Dimension], Field(min_length=1), at_most(MAX_RANK, "dimensions")]
    dtype: Token
    layout: Layout | None = None


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
    expression: Text2000 | None = None
    mutation: Literal["none", "in_place", "destination"]
    determinism: Literal["deterministic", "nondeterministic", "unspecified"]


class OperationReference(Model):
    language: Token
    artifact: ArtifactRef | None = None


class OperationSpecSpec(Model):
    family: Slug
    axes: Annotated[dict[Token, Axis], at_most(MAX_AXES, "axes")]
    inputs: Annotated[list[Operand], Field(min_length=1), at_most(MAX_TENSORS, "inputs")]
    outputs: Annotated[list[Operand], Field(min_length=1), at_most(MAX_TENSORS, "outputs")]
    semantics: Semantics
    reference: OperationReference | None = None

    def warnings(self) -> list[Warning_]:
        found: list[Warning_] = []
        for name, axis in self.axes.items():
            if axis.expression is not None:
                try:
                    check_expression(axis.expression)
                except ValueError as error:
                    found.append((f"spec.axes.{name}.expression", str(error)))
            low, high = axis.minimum, axis.maximum
            if low is not None and high is not None and low > high:
                found.append((f"spec.axes.{name}", "minimum is greater than maximum"))
        for side in ("inputs", "outputs"):
            for index, operand in enumerate(getattr(self, side)):
                shape = operand.tensor.shape if operand.tensor else []
                for dim in shape:
                    if isinstance(dim, str) and dim not in self.axes:
                        found.append(
                            (f"spec.{side}[{index}].tensor.shape", f"undeclared axis {dim!r}")
                        )
        names = [operand.name for operand in (*self.inputs, *self.outputs)]
        if len(names) != len(set(names)):
            found.append(("spec", "operand names repeat"))
        return found


# --- WorkloadCase and WorkloadSuite ---------------------------------------------------------------


class TensorData(Model):
    """How a tensor's values were made: a generator, its seed and parameters, or an artifact."""

    generator: Token
    seed: NonNegativeInt | None = None
    parameters: Annotated[dict[Token, FiniteNumber], at_most(MAX_ITEMS, "parameters")] | None = None
    artifact: ArtifactRef | None = None


class TensorCase(Model):
    shape: Annotated[list[NonNegativeInt], Field(min_length=1), at_most(MAX_RANK, "dimensions")]
    dtype: Token
    strides: Annotated[list[Integer], at_most(MAX_RANK, "strides")] | None = None
    alignment_bytes: PositiveInt | None = None
    data: TensorData | None = None


class ScalarCase(Model):
    dtype: Token
    value: FiniteNumber


Policy = Literal["reject", "exact_match", "ignore"]


class WorkloadCorrectness(Model):
    comparator: Token
    max_absolute_error: NonNegativeNumber | None = None
    max_relative_error: NonNegativeNumber | None = None
    required_matched_ratio: Ratio | None = None
    nan_policy: Policy | None = None
    infinity_policy: Policy | None = None


class WorkloadCaseSpec(Model):
    operation_spec_digest: Digest
    axes: Annotated[dict[Token, Integer], at_most(MAX_AXES, "axes")]
    tensors: Annotated[dict[Token, TensorCase], at_most(MAX_TENSORS, "tensors")]
    scalars: Annotated[dict[Token, ScalarCase], at_most(MAX_TENSORS, "scalars")] | None = None
    correctness: WorkloadCorrectness

    def warnings(self) -> list[Warning_]:
        return [
            (f"spec.tensors.{name}.strides", "strides and shape differ in length")
            for name, tensor in self.tensors.items()
            if tensor.strides is not None and len(tensor.strides) != len(tensor.shape)
        ]


class SuiteCase(Model):
    external_id: Text200
    axes: Annotated[dict[Token, Integer], at_most(MAX_AXES, "axes")]


class SuiteCorrectness(Model):
    comparator: Token
    description: Text500 | None = None


class Aggregation(Model):
    """How a suite's cases combine into its one result: the metric and the statistic."""

    metric: Token
    statistic: Token


class WorkloadSuiteSpec(Model):
    """An ordered list of cases with a published aggregation rule: a result on a suite is the
    source's aggregate over its cases, never a measurement of one case."""

    operation_spec_digest: Digest
    cases: Annotated[list[SuiteCase], Field(min_length=1), at_most(MAX_CASES, "cases")]
    correctness: SuiteCorrectness
    aggregation: Aggregation


# --- SoftwareProject ------------------------------------------------------------------------------


class Host(Model):
    kind: Literal["github", "huggingface", "gitlab", "other"]
    id: Text200


class Package(Model):
    ecosystem: Token  # pypi, npm, conda …
    name: Text200


class SoftwareProjectSpec(Model):
    name: Text200
    # A real software project, a competition's author, or a benchmark's submitter; absent
    # publishes as `library`.
    kind: Literal["library", "individual", "vendor"] | None = None
    repository: Url | None = None
    homepage: Url | None = None
    host: Host | None = None
    packages: Annotated[list[Package], at_most(MAX_ITEMS, "packages")] | None = None


# --- ImplementationRevision -----------------------------------------------------------------------


class ProjectRevision(Model):
    repository: Url | None = None
    commit: Commit | None = None
    version: Text100 | None = None
    tree_digest: Digest | None = None


class OperationRef(Model):
    spec_digest: Digest


class Callable(Model):
    language: Token
    path: Text500 | None = None
    symbol: Text200 | None = None
    interface: Token | None = None


class Support(Model):
    hardware_architectures: TokenSet
    products_tested: Text100Set | None = None
    axes: Annotated[Text200Set, at_most(MAX_AXES, "axes")] | None = None
    dtypes: TokenSet
    layouts: Text50Set | None = None


class SourceFile(Model):
    """The revision's own source file, mirrored as an artifact: its bytes are its identity."""

    content_digest: Digest
    file_name: Text200 | None = None
    size_bytes: PositiveInt | None = None


class Install(Model):
    kind: Literal["git", "pip", "package", "container", "source"]
    repository: Url | None = None
    commit: Commit | None = None
    package: Text200 | None = None
    version: Text100 | None = None
    command: Text1000 | None = None


class BuildVariant(Model):
    name: Name
    install: Install
    requirements: Annotated[dict[Token, Text200], at_most(MAX_ITEMS, "requirements")] | None = None


class LicenceEvidence(Model):
    path: Text500
    digest: Digest | None = None


class Licensing(Model):
    declared: Text200 | None = None
    concluded: Text200 | None = None
    evidence: LicenceEvidence | None = None


class ImplementationRevisionSpec(Model):
    project_revision: ProjectRevision
    operation: OperationRef
    callable: Callable
    support: Support
    source: SourceFile | None = None
    build_variants: Annotated[list[BuildVariant], at_most(MAX_ITEMS, "build variants")] | None = (
        None
    )
    licensing: Licensing


# --- BenchmarkProtocol ----------------------------------------------------------------------------


class Harness(Model):
    name: Text200
    version: Text100 | None = None
    repository: Url | None = None
    commit: Commit | None = None


class Measurement(Model):
    timer: Token
    synchronization: Token | None = None
    # Absent means the source did not state it.
    compile_included: bool | None = None
    setup_included: bool | None = None
    warmup_iterations: NonNegativeInt | None = None
    warmup_duration: Duration | None = None
    measured_iterations: PositiveInt | None = None
    samples: PositiveInt | None = None
    input_regeneration: Token | None = None
    outlier_policy: Text500 | None = None
    primary_statistic: Token


class ProtocolCorrectness(Model):
    reference: Text500
    comparator: Token


class DevicePolicy(Model):
    clocks_locked: bool | None = None
    power_limit_watts: PositiveNumber | None = None
    persistence_mode: bool | None = None


class Comparability(Model):
    family: Token
    notes: Text1000 | None = None


class BenchmarkProtocolSpec(Model):
    harness: Harness
    measurement: Measurement
    correctness: ProtocolCorrectness | None = None
    device_policy: DevicePolicy | None = None
    comparability: Comparability | None = None


# --- ExecutionEnvironment -------------------------------------------------------------------------


class Hardware(Model):
    vendor: Token
    product: Text200
    architecture: Token
    form_factor: Text100 | None = None
    memory_bytes: PositiveInt | None = None
    count: PositiveInt | None = None
    interconnect: Text200 | None = None


class Framework(Model):
    name: Token
    version: Text100


class Software(Model):
    operating_system: Text200 | None = None
    kernel: Text200 | None = None
    driver: Text100 | None = None
    cuda_toolkit: Text100 | None = None
    compiler: Text200 | None = None
    framework: Framework | None = None
    # Library name → version.
    libraries: Annotated[dict[Token, Text100], at_most(MAX_ITEMS, "libraries")] | None = None


EnvironmentVariableName = Annotated[str, StringConstraints(max_length=200)]


class Settings(Model):
    clocks_locked: bool | None = None
    power_limit_watts: PositiveNumber | None = None
    persistence_mode: bool | None = None
    ecc_enabled: bool | None = None
    environment_variables: (
        Annotated[
            dict[EnvironmentVariableName, Text500], at_most(MAX_ITEMS, "environment variables")
        ]
        | None
    ) = None


class ExecutionEnvironmentSpec(Model):
    hardware: Hardware
    software: Software
    settings: Settings | None = None
    image_digest: Digest | None = None


# --- BenchmarkRun ---------------------------------------------------------------------------------

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
    raw_samples: ArtifactRef | None = None


class RunMeasurement(Model):
    metric: Token
    unit: Token
    statistic: Token
    value: MeasuredValue
    sample_count: PositiveInt | None = None


class SourceNative(Model):
    source: Slug
    benchmark: Text200 | None = None
    external_id: Text500 | None = None
    metrics: Annotated[dict[Token, FiniteNumber], at_most(MAX_ITEMS, "metrics")] | None = None


class RunCorrectness(Model):
    comparator: Token
    maximum_absolute_error: NonNegativeNumber | None = None
    maximum_relative_error: NonNegativeNumber | None = None
    matched_ratio: Ratio | None = None


class HarnessRevision(Model):
    repository: Url
    commit: Commit


class Evidence(Model):
    logs: ArtifactRef | None = None
    raw_samples: ArtifactRef | None = None
    harness: HarnessRevision | None = None


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


# --- the envelope ---------------------------------------------------------------------------------


class Resource(Model):
    """The four-key envelope shared by every kind."""

    api_version: Literal["kernelindex.dev/v1alpha1"]
    metadata: Metadata
    # Each kind narrows `kind` and `spec`; `references` names its digest fields and the kinds
    # each may point at.
    references: ClassVar[dict[tuple[str, ...], tuple[str, ...]]] = {}

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

    def warnings(self) -> list[Warning_]:
        """What the format allows here but a reader should look at again: (JSON path, message)."""
        spec_warnings = getattr(getattr(self, "spec", None), "warnings", None)
        return spec_warnings() if spec_warnings else []


class OperationSpec(Resource):
    kind: Literal["OperationSpec"]
    spec: OperationSpecSpec


class WorkloadCase(Resource):
    kind: Literal["WorkloadCase"]
    spec: WorkloadCaseSpec
    references: ClassVar[dict[tuple[str, ...], tuple[str, ...]]] = {
        ("spec", "operationSpecDigest"): ("OperationSpec",),
    }


class WorkloadSuite(Resource):
    kind: Literal["WorkloadSuite"]
    spec: WorkloadSuiteSpec
    references: ClassVar[dict[tuple[str, ...], tuple[str, ...]]] = {
        ("spec", "operationSpecDigest"): ("OperationSpec",),
    }


class SoftwareProject(Resource):
    kind: Literal["SoftwareProject"]
    spec: SoftwareProjectSpec


class ImplementationRevision(Resource):
    kind: Literal["ImplementationRevision"]
    spec: ImplementationRevisionSpec
    references: ClassVar[dict[tuple[str, ...], tuple[str, ...]]] = {
        ("spec", "operation", "specDigest"): ("OperationSpec",),
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
    references: ClassVar[dict[tuple[str, ...], tuple[str, ...]]] = {
        ("spec", "implementationDigest"): ("ImplementationRevision",),
        ("spec", "workloadDigest"): ("WorkloadCase", "WorkloadSuite"),
        ("spec", "protocolDigest"): ("BenchmarkProtocol",),
        ("spec", "environmentDigest"): ("ExecutionEnvironment",),
    }


KINDS: dict[str, type[Resource]] = {
    model.__name__: model
    for model in (
        OperationSpec,
        WorkloadCase,
        WorkloadSuite,
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
