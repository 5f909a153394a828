"""`make venv`: gives the Python running this a .pth that installs the bytecode cache with the cache
directory given (ascend_sandbox_bytecode_cache.py says why), unless it has that one already.

Usage: python add_to_venv.py CACHE_DIR
"""

import os
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    cache_dir = os.path.abspath(sys.argv[1])
    wanted = ("# make venv: sandbox/bytecode-cache/ascend_sandbox_bytecode_cache.py says why.\n%s\n"
              "import ascend_sandbox_bytecode_cache; ascend_sandbox_bytecode_cache.install(%r)\n" % (HERE, cache_dir))
    path = os.path.join(sysconfig.get_paths()["purelib"], "ascend_sandbox_bytecode_cache.pth")
    try:
        with open(path) as stream:
            if stream.read() == wanted:
                return 0
    except FileNotFoundError:
        pass
    # Beside other makes' Pythons starting from this venv: they read the old file or the new one.
    temporary = "%s.%d.tmp" % (path, os.getpid())
    with open(temporary, "w") as stream:
        stream.write(wanted)
    os.replace(temporary, path)
    print("venv: %s installs the bytecode cache of %s" % (path, cache_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
