# -*- coding: utf-8 -*-
"""The simulator is independent: nothing under sandbox/ uses the collection's code.

A fake package named by the collection's own naming code would hide a naming bug from every
test; a fake that parsed with the collection's parsers would agree with them by construction.
Two checks: the source of every sandbox script (imports, and path strings that lead into
plugins/, roles/ or the collection's Ansible name), and a real run of the package builder and
of fleet.py under an audit hook that sees every file they open and every module they import.
"""

import ast
import json
import os
import re
import subprocess
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SANDBOX_DIR = os.path.join(REPO_ROOT, 'sandbox')
PRODUCT_DIRS = ('plugins', 'roles')
COLLECTION_NAME = 'ansible_collections'
PRODUCT_WORDS = ('module_utils', COLLECTION_NAME)
_PATH_TOKEN = re.compile(r'[^\s"\'=:;,()\[\]{}]+')


def names_product_path(text):
    """Whether ``text`` names the collection's code: its Ansible name, module_utils, or a relative plugins/ or roles/ path.

    Absolute paths are the node's own (``/etc/dnf/plugins/``); the audit-hook run below catches any file
    actually opened in the collection, whatever its spelling.
    """
    if any(word in text for word in PRODUCT_WORDS):
        return True
    for token in _PATH_TOKEN.findall(text):
        if token.startswith('/') or '/' not in token:
            continue
        parts = [part for part in token.split('/') if part not in ('', '.', '..')]
        if parts and parts[0] in PRODUCT_DIRS:
            return True
    return False


def _is_python(path):
    if path.endswith('.py'):
        return True
    with open(path, 'rb') as handle:
        head = handle.read(200)
    # The node's boot helper is Python without an extension or shebang (docs/development.md).
    return head.startswith(b'"""') or b'python' in head.split(b'\n', 1)[0]


def _sandbox_files():
    for root, directories, files in os.walk(SANDBOX_DIR):
        directories[:] = [name for name in directories if name != '__pycache__']
        for name in files:
            if not name.endswith(('.md', '.json', '.yml', '.yaml', '.conf', '.txt', '.pyc')):
                yield os.path.join(root, name)


def python_violations(source, filename='<source>'):
    """What in a Python source reaches into the collection: imports and path strings."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            if name.split('.')[0] in (COLLECTION_NAME,) + PRODUCT_DIRS:
                found.append('line %d imports %s' % (node.lineno, name))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if text in PRODUCT_DIRS or names_product_path(text):
                found.append('line %d names %r' % (node.lineno, text))
    return found


def shell_violations(text):
    return ['line %d names the collection: %s' % (number, line.strip())
            for number, line in enumerate(text.splitlines(), 1)
            if not line.lstrip().startswith('#') and names_product_path(line)]


def test_the_check_finds_the_old_borrowing():
    # What build.py did before: load the collection's ascend_package by path and by its Ansible name.
    borrowed = ('import os\nMODULE_UTILS = os.path.join(ROOT, "plugins", "module_utils")\n'
                'qualified = "ansible_collections.npu.ascend.plugins.module_utils." + name\n')
    assert len(python_violations(borrowed)) == 3
    assert python_violations('from ansible_collections.npu.ascend.plugins.module_utils import pci\n')
    assert python_violations('import roles.cann\n')
    assert shell_violations('cp ../plugins/module_utils/hardware/pci.py .\n')
    # containerd's TOML tables are called plugins too; they lead nowhere into the collection.
    assert python_violations('table = \'[plugins."%s".containerd]\' % name\n') == []
    assert shell_violations('PYTHONPATH=./roles/cann/files python3\n')
    # The node's own plugin directories are not the collection's.
    assert python_violations('PLUGIN = "/usr/lib/python3/dist-packages/dnf-plugins/versionlock.py"\n') == []
    assert shell_violations('cat /etc/dnf/plugins/versionlock.conf\n') == []


@pytest.mark.parametrize('path', sorted(_sandbox_files()), ids=lambda path: os.path.relpath(path, SANDBOX_DIR))
def test_no_sandbox_file_reaches_into_the_collection(path):
    with open(path, encoding='utf-8') as handle:
        text = handle.read()
    found = python_violations(text, path) if _is_python(path) else shell_violations(text)
    assert found == [], '%s uses the collection: %s' % (os.path.relpath(path, REPO_ROOT), '; '.join(found))


# Runs a sandbox entry point with an audit hook that records the files it opens and the modules it
# imports, then prints them as JSON on the last line.
AUDITED_RUN = r'''
import json, os, runpy, sys
opened, imported = set(), set()
def hook(event, args):
    if event == "open" and isinstance(args[0], str):
        opened.add(os.path.realpath(args[0]))
    elif event == "import":
        imported.add(args[0])
sys.addaudithook(hook)
script, argv = sys.argv[1], sys.argv[2:]
sys.argv = [script] + argv
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit:
    pass
print(json.dumps({"opened": sorted(opened), "imported": sorted(imported)}))
'''


def _audited(script, *argv):
    result = subprocess.run([sys.executable, '-c', AUDITED_RUN, script] + list(argv), cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                            env=dict(os.environ, LC_ALL='C', PYTHONPATH=''), check=False, timeout=120)
    assert result.stdout.strip(), result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def _product_uses(record):
    product_roots = tuple(os.path.join(os.path.realpath(REPO_ROOT), name) + os.sep for name in PRODUCT_DIRS)
    return ([path for path in record['opened'] if path.startswith(product_roots)]
            + [name for name in record['imported'] if name.split('.')[0] == COLLECTION_NAME])


@pytest.mark.parametrize('component, chip, version, arch', [
    ('driver', '910b', '25.0.rc1.1', 'x86_64'),
    ('firmware', '310p', '7.7.0.1.231', 'x86_64'),
    ('toolkit', '910b', '8.5.0', 'aarch64'),
    ('kernels', 'A3', '8.2.RC1', 'aarch64'),
    ('ops', '910b', '8.5.0', 'x86_64'),
    ('nnal', '910b', '8.2.RC1', 'x86_64'),
    ('docker_runtime', '910b', '7.3.0', 'x86_64'),
])
def test_building_a_package_opens_nothing_of_the_collection(tmp_path, component, chip, version, arch):
    record = _audited(os.path.join(SANDBOX_DIR, 'packages', 'build.py'), '--component', component, '--chip', chip,
                      '--version', version, '--arch', arch, '--out', str(tmp_path))
    assert [name for name in os.listdir(str(tmp_path)) if name.endswith('.run')], 'build.py built nothing'
    assert _product_uses(record) == []


def test_the_fleet_tool_opens_nothing_of_the_collection():
    record = _audited(os.path.join(SANDBOX_DIR, 'fleet.py'), '--help')
    assert 'yaml' in record['imported']
    assert _product_uses(record) == []
