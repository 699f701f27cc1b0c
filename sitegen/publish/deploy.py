"""Where this build will be published: Netlify's build environment and the command-line options.

The only module that reads the deploy environment. `deployment_from` turns `CONTEXT`, `URL`,
`DEPLOY_PRIME_URL`, `REVIEW_ID`, `HEAD`/`BRANCH`, `COMMIT_REF`, `REPOSITORY_URL` (and sitegen's own
`SITEGEN_COMPARE_WITH`, `SITEGEN_BASE_BRANCH`) into one frozen `Deployment`, options first, which
the pipeline passes forward. A build with no context at all is a local build: it is published
like production, so the output of a plain `sitegen build` does not depend on this module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from sitegen.model.web import check_web_url

PRODUCTION = "production"
DEPLOY_PREVIEW = "deploy-preview"
BRANCH_DEPLOY = "branch-deploy"
CONTEXTS = (PRODUCTION, DEPLOY_PREVIEW, BRANCH_DEPLOY, "dev")
DEFAULT_BASE_BRANCH = "main"
_COMMIT = re.compile(r"^[0-9a-f]{7,64}$")
_REVIEW_ID = re.compile(r"^[1-9][0-9]{0,9}$")
# A git branch name as a build may be told it: no spaces, control characters or `..` tricks.
_BRANCH = re.compile(r"^(?!-)(?!.*\.\.)[A-Za-z0-9._/+-]{1,200}$")
_GITHUB_SSH = re.compile(r"^git@github\.com:([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?$")
_GITHUB_HTTPS = re.compile(
    r"^https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$"
)


class DeployError(ValueError):
    """A deploy setting (option or environment variable) we cannot use."""


class Deployment(NamedTuple):
    """One build's publication: its Netlify context and what the pages say about it."""

    context: str | None = None  # None: a local build, published like production
    base_url: str | None = None  # canonical site (`URL`, `--base-url`); None: kernelindex.dev
    deploy_url: str | None = None  # where this very deploy is served (`DEPLOY_PRIME_URL`)
    review_id: str | None = None  # the pull request number of a deploy preview
    branch: str | None = None
    commit: str | None = None  # full or abbreviated hex
    repository_url: str | None = None
    compare_with: str | None = None  # an explicit base for the changes page
    base_branch: str = DEFAULT_BASE_BRANCH  # what a preview is compared with by default

    @property
    def production(self) -> bool:
        return self.context in (None, PRODUCTION)

    @property
    def indexable(self) -> bool:
        """Only production may be indexed: every other context is noindex, everywhere."""
        return self.production

    @property
    def compares(self) -> bool:
        """Whether this build gets a changes page: every preview, or when a base is named."""
        return self.compare_with is not None or self.context in (DEPLOY_PREVIEW, BRANCH_DEPLOY)

    @property
    def short_commit(self) -> str | None:
        return self.commit[:7] if self.commit else None

    def repository_web_url(self) -> str | None:
        """The repository's https page on GitHub, from an https or ssh clone URL."""
        if not self.repository_url:
            return None
        for pattern in (_GITHUB_HTTPS, _GITHUB_SSH):
            match = pattern.fullmatch(self.repository_url)
            if match:
                return f"https://github.com/{match.group(1)}/{match.group(2)}"
        return None

    def pull_request_url(self) -> str | None:
        web = self.repository_web_url()
        return f"{web}/pull/{self.review_id}" if web and self.review_id else None

    def commit_url(self) -> str | None:
        web = self.repository_web_url()
        return f"{web}/commit/{self.commit}" if web and self.commit else None


def deployment_from(
    environment: Mapping[str, str],
    *,
    context: str | None = None,
    base_url: str | None = None,
    deploy_url: str | None = None,
    review_id: str | None = None,
    branch: str | None = None,
    commit: str | None = None,
    compare_with: str | None = None,
    base_branch: str | None = None,
) -> Deployment:
    """The deployment from Netlify's variables, each overridden by its option when given.

    Raises DeployError naming the option or variable whose value cannot be used.
    """

    def pick(option: str | None, *names: str) -> tuple[str | None, str]:
        if option is not None:
            return option.strip() or None, "option"
        for name in names:
            value = environment.get(name, "").strip()
            if value:
                return value, name
        return None, names[0] if names else "option"

    chosen_context, where = pick(context, "CONTEXT")
    if chosen_context is not None and not re.fullmatch(r"[a-z0-9-]{1,50}", chosen_context):
        raise DeployError(f"{where}: not a deploy context: {chosen_context!r}")
    url, _ = pick(base_url, "URL")
    deployed, where = pick(deploy_url, "DEPLOY_PRIME_URL", "DEPLOY_URL")
    if deployed is not None:
        try:
            check_web_url(deployed)
        except ValueError as error:
            raise DeployError(f"{where}: the deploy URL must be http(s): {error}") from None
    review, where = pick(review_id, "REVIEW_ID")
    if review is not None and not _REVIEW_ID.fullmatch(review):
        raise DeployError(f"{where}: a pull request number is a positive integer: {review!r}")
    # HEAD is the branch a pull request comes from; BRANCH is the one Netlify checks out.
    head, where = pick(branch, "HEAD", "BRANCH")
    if head is not None and not _BRANCH.fullmatch(head):
        raise DeployError(f"{where}: not a branch name: {head!r}")
    sha, where = pick(commit, "COMMIT_REF")
    if sha is not None and not _COMMIT.fullmatch(sha.lower()):
        raise DeployError(f"{where}: a commit is 7 to 64 hex digits: {sha!r}")
    base, _ = pick(compare_with, "SITEGEN_COMPARE_WITH")
    base_name, where = pick(base_branch, "SITEGEN_BASE_BRANCH")
    if base_name is not None and not _BRANCH.fullmatch(base_name):
        raise DeployError(f"{where}: not a branch name: {base_name!r}")
    repository, _ = pick(None, "REPOSITORY_URL")
    return Deployment(
        context=chosen_context,
        base_url=url,
        deploy_url=deployed,
        review_id=review,
        branch=head,
        commit=sha.lower() if sha else None,
        repository_url=repository,
        compare_with=base,
        base_branch=base_name or DEFAULT_BASE_BRANCH,
    )
