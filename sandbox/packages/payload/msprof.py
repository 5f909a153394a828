"""Fake ``msprof`` of the sandbox (installed by the fake CANN toolkit as tools/profiler/bin/msprof).

What Huawei documents (docs/profiling.md has the sources): ``msprof --output=<dir> <application>``
(or ``--application="<command>"``) runs the application, collects, and leaves a
``PROF_<n>_<timestamp>_<letters>`` directory in ``--output`` (the current directory without it)
holding ``device_<id>/data``, ``host/data`` and ``mindstudio_profiler_output`` with a
``msprof_<timestamp>.json`` timeline and a README.txt.

What the real tool needs and this one checks the same way: the caller may read and write the
NPU device files (``/dev/davinci_manager`` and each ``/dev/davinci<N>``: HwHiAiUser's group on
a real node) and write ``--output``. Chosen by us, unverified: the wording of the errors, exit
code 1 for them, and the application's exit code as msprof's own.
"""

import json
import os
import random
import string
import subprocess
import sys
import time

sys.dont_write_bytecode = True

MANAGER_DEVICE = "/dev/davinci_manager"


def _error(message):
    sys.stderr.write("[ERROR] msprof: %s\n" % message)
    return 1


def _parse(argv):
    output, application, rest = None, None, []
    index = 0
    while index < len(argv):
        argument = argv[index]
        if argument.startswith("--output="):
            output = argument.split("=", 1)[1]
        elif argument.startswith("--application="):
            application = ["/bin/sh", "-c", argument.split("=", 1)[1]]
        elif argument.startswith("--") and not rest:
            pass  # collection switches (--ai-core=on, --sys-devices=0, ...) change nothing here
        else:
            rest = argv[index:]
            break
        index += 1
    return output, application or rest


def _devices():
    names = sorted((name for name in os.listdir("/dev") if name.startswith("davinci") and name[7:].isdigit()),
                   key=lambda name: int(name[7:]))
    return [os.path.join("/dev", name) for name in names]


def main(argv):
    output, application = _parse(argv)
    if not application:
        return _error("no application to profile; usage: msprof --output=<dir> <application> [args]")
    output = os.path.abspath(output or os.getcwd())
    devices = _devices()
    if not devices or not os.path.exists(MANAGER_DEVICE):
        return _error("no NPU device files (/dev/davinci*); is the driver loaded?")
    for path in [MANAGER_DEVICE] + devices:
        if not os.access(path, os.R_OK | os.W_OK):
            return _error("permission denied on %s: run as root or as a member of the group that owns it "
                          "(HwHiAiUser's on a default driver install)" % path)
    if not os.path.isdir(output):
        return _error("--output %s is not a directory" % output)
    if not os.access(output, os.W_OK | os.X_OK):
        return _error("--output %s is not writable by this user" % output)
    started = time.time()
    try:
        completed = subprocess.run(application, check=False)
    except OSError as error:
        return _error("cannot run %s: %s" % (application[0], error))
    stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(started)) + "%03d" % int((started % 1) * 1000)
    existing = [name for name in os.listdir(output) if name.startswith("PROF_")]
    letters = "".join(random.choices(string.ascii_uppercase, k=16))
    prof_dir = os.path.join(output, "PROF_%06d_%s_%s" % (len(existing) + 1, stamp, letters))
    device_ids = [int(os.path.basename(path)[7:]) for path in devices]
    for sub in ["host/data", "mindstudio_profiler_output"] + ["device_%d/data" % n for n in device_ids]:
        os.makedirs(os.path.join(prof_dir, sub))
    events = [{"name": " ".join(application), "ph": "X", "pid": os.getpid(), "tid": 0,
               "ts": started * 1e6, "dur": (time.time() - started) * 1e6}]
    results = os.path.join(prof_dir, "mindstudio_profiler_output")
    with open(os.path.join(results, "msprof_%s.json" % stamp), "w") as handle:
        json.dump(events, handle)
    with open(os.path.join(results, "README.txt"), "w") as handle:
        handle.write("Profile of a simulated NPU (ascend-sandbox): the timeline holds the application's run only.\n")
    print("[INFO] Profiling finished, data saved in %s" % prof_dir)
    return completed.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
