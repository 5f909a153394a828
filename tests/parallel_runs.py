"""Commands side by side, each into a log of its own, saying when each starts and how it ended.

What `make test`'s checks stage (tests/run_stages.py) and its molecule stage
(tests/molecule/run_scenarios.py) share; each says what its commands are and what a failure prints.
"""

import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

_PRINT_LOCK = threading.Lock()


def say(text):
    # Threads report at the same time; one line each, never run together.
    with _PRINT_LOCK:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def run_logged(label, argv, log_path, cwd):
    """Runs argv with its output in log_path and no stdin (nothing may wait for an answer); says
    "<label> started" and "<label> passed|FAILED (rc N) in S s". Returns (returncode, seconds)."""
    started = time.monotonic()
    say("%s started" % label)
    with open(log_path, "w") as log:
        returncode = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    check=False).returncode
    elapsed = time.monotonic() - started
    say("%s %s in %.0f s" % (label, "passed" if returncode == 0 else "FAILED (rc %d)" % returncode, elapsed))
    return returncode, elapsed


def side_by_side(function, items, jobs):
    """function(item) for every item, ``jobs`` at a time, in the items' order; the results in that order."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(function, items))
