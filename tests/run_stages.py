"""Run make targets side by side and report each one's outcome, as `make test`'s checks and scenarios stages.

lint, sanity and the test suites read the tree and write only under .cache/ (each its own
directory), and most of them keep one core busy at most: run together, they finish in the time
of their CPU work, not of their sum. Each target's output goes to .cache/logs/stage-<target>.log;
the log of a failed target is printed at the end, so CI's output shows it.
"""

import argparse
import sys
from pathlib import Path

from parallel_runs import run_logged, side_by_side

REPO_ROOT = Path(__file__).resolve().parent.parent
LOG_DIR = REPO_ROOT / ".cache" / "logs"
# What CI's reader needs of a failed target: its end, where make and pytest put the failures.
FAILED_LOG_LINES = 400


def run(target):
    log_path = LOG_DIR / ("stage-%s.log" % target)
    returncode, elapsed = run_logged("make %s" % target, ["make", "--no-print-directory", target], log_path, REPO_ROOT)
    return target, returncode, elapsed, log_path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="checks", help="the stage's name in the closing line")
    parser.add_argument("targets", nargs="+", help="make targets, started in this order")
    args = parser.parse_args()
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    results = side_by_side(run, args.targets, len(args.targets))
    failed = [(target, log) for target, returncode, _elapsed, log in results if returncode != 0]
    for target, log in failed:
        lines = log.read_text(errors="replace").splitlines()
        print("\n======== make %s FAILED: last %d of %d lines of %s ========"
              % (target, min(FAILED_LOG_LINES, len(lines)), len(lines), log.relative_to(REPO_ROOT)))
        print("\n".join(lines[-FAILED_LOG_LINES:]))
    outcomes = ", ".join("%s %s %.0f s" % (target, "passed" if rc == 0 else "FAILED", elapsed)
                         for target, rc, elapsed, _log in results)
    print("\n%s: %s" % (args.label, outcomes))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
