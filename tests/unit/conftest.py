# -*- coding: utf-8 -*-
"""Make the repository importable as ``ansible_collections.npu.ascend`` for the unit tests.

The collection is used exactly as Ansible ships it: through the
``.cache/collections/ansible_collections/npu/ascend -> <repo>`` symlink described in
docs/development.md, so module_utils imports in the tests resolve the same way they
do on a node.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS_ROOT = os.path.join(REPO_ROOT, '.cache', 'collections')
NAMESPACE_DIR = os.path.join(COLLECTIONS_ROOT, 'ansible_collections', 'npu')
COLLECTION_LINK = os.path.join(NAMESPACE_DIR, 'ascend')
SAMPLES_DIR = os.path.join(REPO_ROOT, 'tests', 'fixtures', 'samples')
SYNTHETIC_DIR = os.path.join(REPO_ROOT, 'tests', 'unit', 'fixtures')


def _ensure_collection_link():
    os.makedirs(NAMESPACE_DIR, exist_ok=True)
    if os.path.islink(COLLECTION_LINK) and os.path.realpath(COLLECTION_LINK) == os.path.realpath(REPO_ROOT):
        return
    try:
        os.symlink(REPO_ROOT, COLLECTION_LINK)
    except FileExistsError:
        # Another process (make, a parallel test run) may have created it meanwhile.
        if os.path.realpath(COLLECTION_LINK) != os.path.realpath(REPO_ROOT):
            raise RuntimeError('%s exists but does not point at %s' % (COLLECTION_LINK, REPO_ROOT))


def _make_importable():
    _ensure_collection_link()
    if COLLECTIONS_ROOT not in sys.path:
        sys.path.insert(0, COLLECTIONS_ROOT)
    import ansible_collections
    ours = os.path.join(COLLECTIONS_ROOT, 'ansible_collections')
    # The `ansible` package installs its own ansible_collections directory; when that one is
    # a regular package it would hide ours, so add our directory to its search path.
    if ours not in list(ansible_collections.__path__) and isinstance(ansible_collections.__path__, list):
        ansible_collections.__path__.insert(0, ours)


_make_importable()

try:
    # ansible-core 2.19 and later: the supported way (it also sets the module's serialization profile).
    from ansible.module_utils.testing import patch_module_args  # noqa: E402
except ImportError:  # ansible-core 2.16 to 2.18 have no ansible.module_utils.testing
    import contextlib
    from unittest import mock

    @contextlib.contextmanager
    def patch_module_args(args=None):
        """Expose ``args`` to the AnsibleModule instances made within this context, as 2.19's
        ``ansible.module_utils.testing.patch_module_args`` does: through ``basic._ANSIBLE_ARGS``."""
        from ansible.module_utils import basic
        payload = json.dumps({'ANSIBLE_MODULE_ARGS': args or {}}).encode('utf-8')
        with mock.patch.object(basic, '_ANSIBLE_ARGS', payload):
            yield

try:
    # ansible-core 2.19 renders only strings marked trusted as templates; the role tests import it from here.
    from ansible.template import trust_as_template  # noqa: E402  pylint: disable=unused-import
except ImportError:  # 2.16 to 2.18 render every string
    def trust_as_template(value):
        return value


def read_text(path):
    with open(path, encoding='utf-8') as handle:
        return handle.read()


@pytest.fixture
def sample():
    """Return the text of a sample under tests/fixtures/samples (e.g. ``sample('npu-smi/x.txt')``)."""
    return lambda relative: read_text(os.path.join(SAMPLES_DIR, relative))


@pytest.fixture
def synthetic():
    """Return the text of a synthetic fixture under tests/unit/fixtures."""
    return lambda relative: read_text(os.path.join(SYNTHETIC_DIR, relative))


@pytest.fixture
def run_module(capsys):
    """Run a module's main() as a task would and return the result dict it printed.

    AnsibleModule reports by printing JSON and calling sys.exit(), so every module test needs
    the same patch-args / catch-SystemExit / parse-stdout steps; one copy keeps them identical.
    ``diff`` is on by default because the modules that change files are run as under ``--diff``
    and their tests assert on ``result['diff']``; the read-only modules' tests pass
    ``check_mode=True, diff=False``.
    """
    def run(module, args, check_mode=False, diff=True):
        with patch_module_args(dict(args, _ansible_check_mode=check_mode, _ansible_diff=diff)):
            with pytest.raises(SystemExit):
                module.main()
        return json.loads(capsys.readouterr().out)
    return run


@pytest.fixture(autouse=True)
def node_lock_in_tmp(tmp_path_factory, monkeypatch):
    """The modules take the node lock under /var/lib/npu_ascend; unit tests take it in a directory of their own."""
    from ansible_collections.npu.ascend.plugins.module_utils.files import node_lock
    path = str(tmp_path_factory.mktemp('node-lock') / 'lock')
    monkeypatch.setattr(node_lock, 'LOCK_PATH', path)
    return path


@pytest.fixture(autouse=True)
def installer_records_in_tmp(tmp_path_factory, monkeypatch):
    """ascend_runfile records its installers under /run/npu_ascend/installers; unit tests in a directory of their own."""
    from ansible_collections.npu.ascend.plugins.module_utils.packages import installer_record
    path = str(tmp_path_factory.mktemp('installers'))
    monkeypatch.setattr(installer_record, 'RECORD_DIR', path)
    return path


@pytest.fixture
def held_by_another_process():
    """``with held_by_another_process(path, holder) as pid``: a forked process holds the node lock meanwhile."""
    import contextlib
    from ansible_collections.npu.ascend.plugins.module_utils.files import node_lock

    @contextlib.contextmanager
    def hold(path, holder):
        ready_read, ready_write = os.pipe()
        done_read, done_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            with node_lock.NodeLock(path=path, holder=holder):
                os.write(ready_write, b'x')
                os.read(done_read, 1)
            os._exit(0)
        os.read(ready_read, 1)
        try:
            yield pid
        finally:
            os.write(done_write, b'x')
            os.waitpid(pid, 0)
    return hold


@pytest.fixture
def bounded():
    """``bounded(function, seconds=5)``: run ``function`` in a forked child with a deadline and a memory cap
    and return what it returned (JSON-able), so that code which hangs on a FIFO or reads /dev/zero without end
    fails the test instead of hanging the suite or exhausting the machine's memory."""
    import resource
    import signal
    import traceback

    def run(function, seconds=5, memory=1024 * 1024 * 1024):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            try:
                signal.alarm(seconds)
                resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
                outcome = {'value': function()}
            except BaseException as error:  # the parent reports whatever went wrong
                outcome = {'error': '%s: %s\n%s' % (type(error).__name__, error, traceback.format_exc())}
            try:
                data = json.dumps(outcome).encode('utf-8')
            except (TypeError, ValueError) as error:
                data = json.dumps({'error': 'result is not JSON: %s' % error}).encode('utf-8')
            with os.fdopen(write_end, 'wb') as stream:
                stream.write(data)
            os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end, 'rb') as stream:
            data = stream.read()
        _pid, status = os.waitpid(pid, 0)
        if not data:
            pytest.fail('the code under test did not finish within %d s or ran out of memory (wait status %d): '
                        'it hangs or reads without end' % (seconds, status))
        outcome = json.loads(data.decode('utf-8'))
        if 'error' in outcome:
            pytest.fail('the code under test raised %s' % outcome['error'])
        return outcome['value']
    return run


def playbook_binary():
    """ansible-playbook beside this Python (the venv's), else on PATH; the test is skipped without one."""
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    if not os.path.exists(binary):
        binary = shutil.which('ansible-playbook')
    if not binary:
        pytest.skip('ansible-playbook is not installed beside this Python')
    return binary


def run_playbook(arguments, timeout=300):
    """ansible-playbook with ``arguments`` against this checkout's collection: (rc, its output with every run
    of whitespace made one blank, since the default callback folds long messages over several lines)."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_ROOT, ANSIBLE_NOCOLOR='1', LC_ALL='C.UTF-8',
               ANSIBLE_LOCALHOST_WARNING='0', ANSIBLE_INVENTORY_UNPARSED_WARNING='0')
    completed = subprocess.run([playbook_binary()] + list(arguments), env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout, check=False)
    return completed.returncode, ' '.join(completed.stdout.split())


def write_tool(directory, name, script):
    """A stand-in command ``name`` in ``directory``: a shell script with ``script`` as its body."""
    path = directory / name
    path.write_text('#!/bin/sh\n' + script)
    path.chmod(0o755)
    return path


class AdvancingClock(object):
    """A clock that advances by ``step`` seconds each time it is read (the timed runs' tests)."""

    def __init__(self, step):
        self.now, self.step = 1000.0, step

    def __call__(self):
        self.now += self.step
        return self.now
