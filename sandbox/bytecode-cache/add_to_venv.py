"""`make venv`: gives the Python running this (a venv's) the bytecode cache, with the cache directory given:
a copy of ascend_sandbox_bytecode_cache.py in its site-packages and a .pth that installs it at every start
(ascend_sandbox_bytecode_cache.py says why). The venv does not depend on the checkout it was made from:
it may live in the machine's cache and serve several clones. Files already as wanted are left alone.

Usage: python add_to_venv.py CACHE_DIR
"""

import os
import sys
import sysconfig

MODULE = "ascend_sandbox_bytecode_cache"
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), MODULE + ".py")


def _put(path, wanted):
    """Writes ``wanted`` to ``path`` unless it holds it already; True when it wrote."""
    try:
        with open(path) as stream:
            if stream.read() == wanted:
                return False
    except FileNotFoundError:
        pass
    # Beside other makes' Pythons starting from this venv: they read the old file or the new one.
    temporary = "%s.%d.tmp" % (path, os.getpid())
    with open(temporary, "w") as stream:
        stream.write(wanted)
    os.replace(temporary, path)
    return True


def main():
    cache_dir = os.path.abspath(sys.argv[1])
    site_packages = sysconfig.get_paths()["purelib"]
    with open(SOURCE) as stream:
        module = stream.read()
    # The module first: a .pth naming a module not there yet would fail every Python starting meanwhile.
    wrote = _put(os.path.join(site_packages, MODULE + ".py"), module)
    wrote = _put(os.path.join(site_packages, MODULE + ".pth"),
                 "# make venv: %s.py says why.\nimport %s; %s.install(%r)\n" % (MODULE, MODULE, MODULE, cache_dir)) or wrote
    if wrote:
        print("venv: %s installs the bytecode cache of %s" % (site_packages, cache_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
