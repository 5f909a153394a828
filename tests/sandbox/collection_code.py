"""The collection's own parsers, for the contract tests that read what the fake packages wrote.

The tests may use product code to check the simulator against it; the simulator itself
(sandbox/) never does (tests/unit/tools/test_sandbox_independence.py).
"""
import importlib.util
import os
import sys

MODULE_UTILS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugins", "module_utils")


def load_module_utils(name):
    """A collection module_utils file, imported under its Ansible name."""
    qualified = "ansible_collections.npu.ascend.plugins.module_utils." + name
    if qualified in sys.modules:
        return sys.modules[qualified]
    if name != "ascend_version":
        # The other module_utils import it under its Ansible name.
        load_module_utils("ascend_version")
    spec = importlib.util.spec_from_file_location(qualified, os.path.join(MODULE_UTILS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    spec.loader.exec_module(module)
    return module
