"""The project's venvs, kept in the machine's cache and linked from the checkout.

`make venv` (.venv from requirements.txt) and `make releases` (.cache/releases/<release>/venv from
tests/releases/requirements-<release>.txt) ask for a venv by its requirements file. It is made once per
machine, under ${NPU_ASCEND_CACHE:-~/.cache/npu-ascend}/venvs/<file>-<key>, where the key is the sha256
of the file and of the Python it is made with, as the node images and the Go builds are kept: a fresh
clone links it instead of downloading and installing a gigabyte again. A changed file is a new key, so a
venv never holds packages that are no longer pinned. The checkout's path is a symbolic link to it
(`. .venv/bin/activate` works as before); a directory an older `make venv` left there is replaced.

A lock per venv makes a second caller (two clones, or `make molecule` beside `make releases`) wait for
the first; a venv is used only once its ``.complete`` stamp is written, so one whose making was
interrupted is made again. Venvs of the same file not asked for in PRUNE_AFTER_DAYS are removed.

Every venv's Python keeps the bytecode of Ansible's zipped modules in the machine's cache too
(sandbox/bytecode-cache/ says why); the bytecode is keyed by its source, so clones share it safely.

Usage: python venv_cache.py REQUIREMENTS LINK
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
MACHINE_CACHE = Path(os.environ.get("NPU_ASCEND_CACHE") or Path.home() / ".cache" / "npu-ascend")
VENVS = MACHINE_CACHE / "venvs"
BYTECODE = MACHINE_CACHE / "bytecode"
ADD_BYTECODE_CACHE = REPO_ROOT / "sandbox" / "bytecode-cache" / "add_to_venv.py"
COMPLETE = ".complete"
PRUNE_AFTER_DAYS = 14


def venv_path(requirements, python_identity=None):
    """Where the venv of ``requirements`` (a path) made with this Python lives."""
    identity = python_identity if python_identity is not None else "%s\n%s" % (sys.version, sys.base_prefix)
    digest = hashlib.sha256(Path(requirements).read_bytes() + b"\0" + identity.encode()).hexdigest()
    return VENVS / ("%s-%s" % (Path(requirements).stem, digest[:16]))


def ensure(requirements, link, say=print):
    """The venv of ``requirements``, made when missing, with ``link`` pointing at it; returns ``link``."""
    requirements, link = Path(requirements).resolve(), Path(link)
    venv = venv_path(requirements)
    VENVS.mkdir(parents=True, exist_ok=True)
    with open(str(venv) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / COMPLETE).exists():
            say("venv: %s is %s, made from %s" % (link, venv, _shown(requirements)))
        else:
            # What an interrupted making left, if anything.
            shutil.rmtree(str(venv), ignore_errors=True)
            _make(venv, requirements, say)
        subprocess.run([str(venv / "bin" / "python"), str(ADD_BYTECODE_CACHE), str(BYTECODE)], check=True)
        # The stamp's time says when the venv was last asked for (_prune).
        os.utime(str(venv / COMPLETE))
    _link(link, venv)
    _prune(venv)
    return link


def _make(venv, requirements, say):
    say("venv: making %s from %s" % (venv, _shown(requirements)))
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                    "--requirement", str(requirements)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "check", "--disable-pip-version-check"], check=True)
    (venv / COMPLETE).write_text(hashlib.sha256(requirements.read_bytes()).hexdigest() + "\n")
    say("venv: made %s in %.0f s" % (venv, time.monotonic() - started))


def _link(link, venv):
    if link.is_symlink() and os.readlink(str(link)) == str(venv):
        return
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_dir() and not link.is_symlink():
        # A venv an older `make venv` made in the checkout.
        shutil.rmtree(str(link))
    temporary = link.parent / (".%s.%d.tmp" % (link.name, os.getpid()))
    os.symlink(str(venv), str(temporary))
    os.replace(str(temporary), str(link))


def _prune(kept):
    """Removes the venvs of the same requirements file nobody asked for in PRUNE_AFTER_DAYS."""
    stem = kept.name.rsplit("-", 1)[0]
    for other in VENVS.glob(stem + "-*"):
        if other == kept or not other.is_dir() or other.name.rsplit("-", 1)[0] != stem:
            continue
        with open(str(other) + ".lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # being made or refreshed right now
            stamp = other / COMPLETE
            asked = stamp.stat().st_mtime if stamp.exists() else other.stat().st_mtime
            if time.time() - asked > PRUNE_AFTER_DAYS * 86400:
                shutil.rmtree(str(other), ignore_errors=True)


def _shown(path):
    try:
        return str(Path(path).relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    try:
        ensure(argv[0], argv[1])
    except subprocess.CalledProcessError as error:
        sys.stderr.write("venv: %s exited %d; its output is above, and the next run makes the venv again\n"
                         % (" ".join(error.cmd), error.returncode))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
