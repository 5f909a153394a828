"""`make releases`: ansible-test sanity and the unit tests on each older ansible-core release the collection claims.

For each release named (2.16, 2.17, 2.18), a venv at .cache/releases/<release>/venv made from
tests/releases/requirements-<release>.txt (rebuilt from scratch when that file's sha256 differs from
the one the venv was made from, as `make venv` does), then `make sanity` with that venv's ansible-test
on a copy of its own, then `pytest tests/unit` with that venv's Python (ansible-playbook beside it runs
the tests' playbooks). The releases run one after the other: the checks around them keep the cores busy.
A failure of one release does not stop the others; the exit status is 1 when any failed.
"""

import argparse
import fcntl
import hashlib
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
CACHE = REPO_ROOT / ".cache" / "releases"
BROWSER_TEST = "tests/unit/plugins/test_fleet_report_in_browser.py"


def requirements_of(release):
    return REPO_ROOT / "tests" / "releases" / ("requirements-%s.txt" % release)


def ensure_venv(release):
    """Make or keep the release's venv; a lock file beside it makes a second caller wait for the first."""
    (CACHE / release).mkdir(parents=True, exist_ok=True)
    with open(CACHE / release / "venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        venv = _ensure_venv(release)
        # As `make venv` does for .venv: the tasks the unit tests' playbooks run on the controller
        # keep the bytecode of Ansible's zipped modules (sandbox/bytecode-cache/).
        subprocess.run([str(venv / "bin" / "python"), str(REPO_ROOT / "sandbox" / "bytecode-cache" / "add_to_venv.py"),
                        str(REPO_ROOT / ".cache" / "bytecode")], check=True)
        return venv


def _ensure_venv(release):
    requirements = requirements_of(release)
    venv = CACHE / release / "venv"
    stamp = venv / ".requirements.sha256"
    wanted = hashlib.sha256(requirements.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text().strip() == wanted:
        print("releases: %s matches %s" % (venv.relative_to(REPO_ROOT), requirements.relative_to(REPO_ROOT)), flush=True)
        return venv
    print("releases: creating %s from %s" % (venv.relative_to(REPO_ROOT), requirements.relative_to(REPO_ROOT)), flush=True)
    started = time.monotonic()
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--requirement", str(requirements)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "check"], check=True)
    stamp.write_text(wanted + "\n")
    print("releases: made %s in %.0f s" % (venv.relative_to(REPO_ROOT), time.monotonic() - started), flush=True)
    return venv


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
