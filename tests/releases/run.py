"""`make releases`: ansible-test sanity and the unit tests on each older ansible-core release the collection claims.

For each release named (2.16, 2.17, 2.18), a venv at .cache/releases/<release>/venv made from
tests/releases/requirements-<release>.txt (a link to the machine's cache, made once per content of
that file, as `make venv` does: tests/venv_cache.py), then `make sanity` with that venv's ansible-test
on a copy of its own, then `pytest tests/unit` with that venv's Python (ansible-playbook beside it runs
the tests' playbooks). The releases run one after the other: the checks around them keep the cores busy.
A failure of one release does not stop the others; the exit status is 1 when any failed.
"""

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))
import venv_cache  # noqa: E402 pylint: disable=wrong-import-position
CACHE = REPO_ROOT / ".cache" / "releases"
BROWSER_TEST = "tests/unit/plugins/test_fleet_report_in_browser.py"


def requirements_of(release):
    return REPO_ROOT / "tests" / "releases" / ("requirements-%s.txt" % release)


def ensure_venv(release):
    """The release's venv, made or kept in the machine's cache (tests/venv_cache.py) and linked at
    .cache/releases/<release>/venv; a second caller waits for the first."""
    return venv_cache.ensure(requirements_of(release), CACHE / release / "venv",
                             say=lambda line: print("releases: " + line, flush=True))


def step(release, name, argv):
    print("\n======== releases: %s on ansible-core %s ========" % (name, release), flush=True)
    started = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    returncode = subprocess.run(argv, cwd=str(REPO_ROOT), check=False).returncode
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # The CPU time is what this step costs CI's two cores, whatever else runs beside it.
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print("======== releases: %s on ansible-core %s %s in %.0f s (%.0f s of CPU) ========"
          % (name, release, "passed" if returncode == 0 else "FAILED", elapsed, cpu), flush=True)
    return name, returncode, elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venvs-only", action="store_true",
                        help="only make or keep the venvs (`make molecule`: host_stack_incompatible runs on 2.16's)")
    parser.add_argument("releases", nargs="+", help="ansible-core releases, such as 2.16")
    args = parser.parse_args()
    if args.venvs_only:
        for release in args.releases:
            ensure_venv(release)
        return 0
    outcomes = []
    for release in args.releases:
        venv = ensure_venv(release)
        sanity_root = ".cache/releases/%s/sanity/ansible_collections/npu/ascend" % release
        outcomes.append((release,) + step(release, "sanity", [
            "make", "--no-print-directory", "sanity", "SANITY_ROOT=%s" % sanity_root,
            "SANITY_VENV_BIN=%s" % (venv / "bin")]))
        # -p no:cacheprovider: pytest's cache under the tree is shared with `make unit`, running beside.
        # The HTML report's browser test renders with the collection's own code and drives chromium: nothing
        # in it depends on ansible-core, so `make unit` runs it once (the release venvs carry no Playwright).
        outcomes.append((release,) + step(release, "unit", [
            str(venv / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", "tests/unit",
            "--ignore=%s" % BROWSER_TEST]))
    print("\nreleases: %s" % ", ".join("%s %s %s %.0f s" % (name, release, "passed" if rc == 0 else "FAILED", elapsed)
                                       for release, name, rc, elapsed in outcomes))
    return 1 if any(rc != 0 for _release, _name, rc, _elapsed in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
