"""A bytecode cache for the code Python imports from zip files: Ansible's modules.

Ansible runs every task's module as a zip (AnsiballZ) that Python imports without writing
bytecode, so each task compiles the helper code shipped in that zip again: 0.05 to 0.09 s of CPU
per task on a native machine, about 0.5 s on an aarch64 node under qemu user emulation. CI is
CPU-bound (docs/development.md) and its scenarios run thousands of tasks. Here the compiled code
is kept under the sha256 of its source, the interpreter's cache tag and its -O level, so a
changed source is compiled again; the file name it reports (in tracebacks) is the importing run's
own. Nothing else changes.

Used in two places, never on a real server and unknown to every role:
- the sandbox nodes: sandbox/fleet.py puts this module and ascend_sandbox_bytecode_cache.pth
  (which installs it at every start of the node's Python; root's directory, so the modules that
  run with become use it) into each node's dist-packages before its first boot;
- the test controller's venvs (`make venv`, `make releases`): add_to_venv.py copies it into the venv
  with a .pth that installs it with a directory of the machine's cache, for the tasks that run on the
  controller (kubernetes.core's modules above all).

The directory is used only while it belongs to the process's own user and no one else can write
to it: a cache another user could write into would let that user's code run in the process.
"""

import os
import stat
import sys
import zipimport

CACHE_DIR = "/var/cache/ascend-sandbox/bytecode"


def _usable(directory):
    """directory, made when missing, if it is a directory of this user's that no one else can write to."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        info = os.lstat(directory)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        return None
    return directory


def _renamed(code, filename):
    """code and the code objects nested in it, reporting filename."""
    constants = tuple(_renamed(constant, filename) if isinstance(constant, type(code)) else constant
                      for constant in code.co_consts)
    return code.replace(co_filename=filename, co_consts=constants)


def install(directory=CACHE_DIR):
    """Makes zipimport keep the code it compiles in directory."""
    compile_source = getattr(zipimport, "_compile_source", None)
    if compile_source is None:
        return
    checked = []

    def cached_compile_source(pathname, source):
        if not checked:
            checked.append(_usable(directory))
        if checked[0] is None:
            return compile_source(pathname, source)
        import hashlib
        import marshal
        # -O drops asserts from what compile() makes: code of one level is not the other's.
        tag = "%s-O%d" % (sys.implementation.cache_tag, sys.flags.optimize)
        key = hashlib.sha256(tag.encode() + b"\0" + source).hexdigest()
        path = os.path.join(checked[0], key)
        try:
            with open(path, "rb") as stream:
                kept = marshal.loads(stream.read())
        except (OSError, EOFError, ValueError, TypeError):
            kept = None
        if isinstance(kept, type(_renamed.__code__)):
            return _renamed(kept, pathname)
        code = compile_source(pathname, source)
        temporary = "%s.%d.tmp" % (path, os.getpid())
        try:
            with open(temporary, "wb") as stream:
                stream.write(marshal.dumps(code))
            os.replace(temporary, path)
        except OSError:
            pass
        return code

    zipimport._compile_source = cached_compile_source
