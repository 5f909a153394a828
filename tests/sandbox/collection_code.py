"""The collection's own parsers, for the contract tests that read what the fake packages wrote.

The tests may use product code to check the simulator against it; the simulator itself
(sandbox/) never does (tests/unit/tools/test_sandbox_independence.py).
"""
import importlib
import os
import sys

REPO_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# The checkout as Ansible sees it: `make venv` links .cache/collections/ansible_collections/npu/ascend to it.
COLLECTIONS_ROOT = os.path.normpath(os.path.join(REPO_ROOT, ".cache", "collections"))


def load_module_utils(name):
    """A collection module_utils file, imported under its Ansible name with the module_utils it imports."""
    if not os.path.isdir(os.path.join(COLLECTIONS_ROOT, "ansible_collections", "npu", "ascend")):
        raise RuntimeError("%s has no link to the checkout; fix: make collection-link" % COLLECTIONS_ROOT)
    if COLLECTIONS_ROOT not in sys.path:
        sys.path.insert(0, COLLECTIONS_ROOT)
    return importlib.import_module("ansible_collections.npu.ascend.plugins.module_utils." + name)
