"""Run every molecule scenario under molecule/, a few at a time, and report each one's outcome.

The scenarios bring up simulated nodes of their own names, so they can run side by side; much of
their time is spent waiting (installers' simulated durations, reboots, systemd), which a second
scenario uses. Each scenario's output goes to .cache/molecule-logs/<scenario>.log; the log of a
failed scenario is printed at the end. Longest scenarios start first, by the durations of the
previous run on this machine, or on a fresh clone by tests/molecule/expected-durations.json.
"""

import argparse
import json
import os
import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))
from parallel_runs import run_logged, say, side_by_side  # noqa: E402  (tests/ is not a package)

LOG_DIR = REPO_ROOT / ".cache" / "molecule-logs"
DURATIONS = LOG_DIR / "durations.json"
EXPECTED_DURATIONS = Path(__file__).resolve().parent / "expected-durations.json"
# Scenarios written but not yet seen passing end to end: the default run names them and leaves
# them out, so that an unfinished scenario cannot hide the others' results; run one by naming it.
PENDING = Path(__file__).resolve().parent / "pending.json"


def scenarios():
    found = sorted(path.parent.name for path in (REPO_ROOT / "molecule").glob("*/molecule.yml"))
    if not found:
        sys.exit("run_scenarios: no scenario found under molecule/")
    pending = json.loads(PENDING.read_text()) if PENDING.exists() else {}
    for name in found:
        if name in pending:
            say("molecule: %s NOT RUN (pending: %s)" % (name, pending[name]))
    return [name for name in found if name not in pending]


def run(scenario):
    log_path = LOG_DIR / ("%s.log" % scenario)
    returncode, elapsed = run_logged("molecule: %s" % scenario, ["molecule", "test", "--scenario-name", scenario],
                                     log_path, REPO_ROOT)
    skipped = missing_steps(log_path.read_text(errors="replace"))
    if returncode == 0 and skipped:
        returncode = 1
        with open(log_path, "a") as log:
            log.write("ERROR! run_scenarios: step(s) %s of the test sequence had no playbook and did not run; "
                      "name the playbook in molecule.yml (ansible: playbooks:)\n" % ", ".join(skipped))
        say("molecule: %s FAILED: step(s) %s had no playbook" % (scenario, ", ".join(skipped)))
    return scenario, returncode, elapsed, log_path


# Molecule passes a scenario whose test_sequence names a step it has no playbook for ("Executed:
# Missing playbook"), so a step written into the sequence could silently never run. cleanup is
# exempt: molecule runs it after a failure whether or not the scenario has one.
MISSING_PLAYBOOK = re.compile(r"➜ (\S+): Executed: Missing playbook")


def missing_steps(log_text):
    """The steps of a scenario's run that molecule skipped for want of a playbook, cleanup aside."""
    found = MISSING_PLAYBOOK.findall(ANSI_ESCAPE.sub("", log_text))
    return sorted(set(step for step in found if step != "cleanup"))


# Molecule colours its output and frames Ansible's lines with "  │ "; Ansible wraps long results
# onto lines indented under the first.
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
MOLECULE_FRAME = re.compile(r"^\s*│ ?")
FAILURE_STARTS = ("fatal: [", "failed: [", "ERROR! ")


def failed_tasks(log_text, limit=6, width=600):
    """The last ``limit`` failed tasks of a log: each task's header line and its failure, unwrapped and shortened."""
    found, task, failure = [], None, None
    for raw in log_text.splitlines():
        line = MOLECULE_FRAME.sub("", ANSI_ESCAPE.sub("", raw))
        if failure is not None and line[:1].isspace() and line.strip():
            failure.append(line.strip())
            continue
        if failure is not None:
            found.append("%s\n    %s" % (task or "(no task)", shorten(" ".join(failure), width)))
            failure = None
        if line.startswith(("TASK [", "RUNNING HANDLER [")):
            task = line.rstrip("* ")
        elif line.startswith(FAILURE_STARTS):
            failure = [line]
    if failure is not None:
        found.append("%s\n    %s" % (task or "(no task)", shorten(" ".join(failure), width)))
    return found[-limit:]


def shorten(text, width):
    return text if len(text) <= width else text[:width] + " ..."


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("MOLECULE_JOBS", "3")))
    parser.add_argument("names", nargs="*", help="scenarios to run (default: all)")
    args = parser.parse_args()
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    wanted = args.names or scenarios()
    previous = json.loads(EXPECTED_DURATIONS.read_text())
    if DURATIONS.exists():
        previous.update(json.loads(DURATIONS.read_text()))
    ordered = sorted(wanted, key=lambda name: -previous.get(name, float("inf")))
    results = side_by_side(run, ordered, args.jobs)
    previous.update({name: round(elapsed) for name, returncode, elapsed, _log in results if returncode == 0})
    DURATIONS.write_text(json.dumps(previous, indent=2, sort_keys=True) + "\n")
    failed = [(name, log, log.read_text(errors="replace")) for name, returncode, _elapsed, log in results
              if returncode != 0]
    for name, log, text in failed:
        print("\n======== molecule %s FAILED: %s ========" % (name, log))
        sys.stdout.write(text[-20000:])
    # The failures once more, last, where a reader of only the end of CI's output sees them.
    for name, _log, text in failed:
        print("\nmolecule %s failed at:" % name)
        print("\n".join(failed_tasks(text)) or "    (no failed task in the log)")
    print("\nmolecule: %d scenario(s), %d failed" % (len(results), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
