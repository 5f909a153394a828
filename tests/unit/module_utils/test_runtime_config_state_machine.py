# -*- coding: utf-8 -*-
"""The attack of issue 30 as part of the suite: present / operator edit / present / absent, in any order.

A Hypothesis state machine per engine drives the real modules (docker_runtime, containerd_runtime)
against one config file while an "operator" edits it in between, and checks after every step:

* check mode changes nothing and reports the ``changed`` the real run then reports;
* every key the operator set is still there with the operator's value after any absent;
* a file the modules never changed is never changed by them;
* once every runtime is removed again and nobody edited the file since the modules' first change,
  the file holds exactly its original bytes.
"""

import contextlib
import io
import json
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from conftest import patch_module_args

from ansible_collections.npu.ascend.plugins.module_utils.files import node_lock
from ansible_collections.npu.ascend.plugins.modules import docker_runtime

tomlkit = pytest.importorskip('tomlkit')

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import toml_editor  # noqa: E402
from ansible_collections.npu.ascend.plugins.modules import containerd_runtime  # noqa: E402

FAST = settings(max_examples=60, stateful_step_count=12, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
NAMES = st.sampled_from(['ascend', 'npu'])
OPERATOR_KEYS = st.sampled_from(['a', 'b', 'c'])
OPERATOR_VALUES = st.integers(0, 3)

DOCKER_ORIGINALS = [
    '{"log-level":"info"}',
    '{\n  "debug": true,\n  "runtimes": {\n    "nvidia": {"path": "nvidia-container-runtime"}\n  },\n'
    '  "default-runtime": "nvidia"\n}\n',
    '{}\n',
    '{\r\n  "runtimes": {}\r\n}\r\n',
    '{"runtimes": null, "default-runtime": "runc"}',
    '',
]
V2 = 'plugins."io.containerd.grpc.v1.cri"'
CONTAINERD_ORIGINALS = [
    'version = 2',
    'version = 2\n\n[%s.containerd]\n  default_runtime_name = "runc"\n  [%s.containerd.runtimes.runc]\n'
    '    runtime_type = "io.containerd.runc.v2"\n    [%s.containerd.runtimes.runc.options]\n'
    '      SystemdCgroup = true\n' % (V2, V2, V2),
    'version = 2\r\n[%s.containerd.runtimes.runc.options]\r\n  SystemdCgroup = true\r\n' % V2,
    'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd]\n  default_runtime_name = \'runc\'  # keep\n',
]


def _run(module, args, check_mode=False):
    out = io.StringIO()
    with patch_module_args(dict(args, _ansible_check_mode=check_mode, _ansible_diff=False)):
        with contextlib.redirect_stdout(out):
            with pytest.raises(SystemExit):
                module.main()
    return json.loads(out.getvalue())


class _ConfigMachine(RuleBasedStateMachine):
    """What both engines share; subclasses say how the operator edits the file and reads their keys."""

    module = None
    file_name = None

    def __init__(self):
        super(_ConfigMachine, self).__init__()
        self.directory = tempfile.mkdtemp(prefix='npu-ascend-sm-')
        self.path = os.path.join(self.directory, self.file_name)
        self.saved_lock_path = node_lock.LOCK_PATH
        node_lock.LOCK_PATH = os.path.join(self.directory, 'lock')
        self.original = None        # the bytes before the modules' first change
        self.operator = {}          # operator key -> value, as the operator last left it
        self.operator_text = None   # the bytes as the operator last left them
        self.ever_changed = False   # whether a module ever changed the file
        self.edited_since = False   # whether the operator edited after the modules' first change
        self.registered = set()

    def teardown(self):
        node_lock.LOCK_PATH = self.saved_lock_path
        shutil.rmtree(self.directory, ignore_errors=True)

    def read(self):
        if not os.path.exists(self.path):
            return None
        with open(self.path, 'rb') as handle:
            return handle.read().decode('utf-8')

    def write(self, text):
        with open(self.path, 'wb') as handle:
            handle.write(text.encode('utf-8'))

    def start(self, original):
        self.original = self.operator_text = original
        self.write(original)

    def _step(self, args):
        before = self.read()
        checked = _run(self.module, args, check_mode=True)
        assert not checked.get('failed'), checked.get('msg')
        assert self.read() == before, 'check mode changed the file'
        result = _run(self.module, args)
        assert not result.get('failed'), result.get('msg')
        assert checked['changed'] == result['changed'], 'check mode reported another changed than the run'
        if self.read() != before and not self.ever_changed:
            # The bytes before the modules' first change are what a full undo must give back.
            self.ever_changed = True
            self.original = before
        return result

    @rule(name=NAMES, default=st.booleans())
    def present(self, name, default):
        self._step({'path': self.path, 'name': name, 'default': default, **self.extra})
        self.registered.add(name)

    @rule(name=NAMES)
    def absent(self, name):
        self._step({'path': self.path, 'name': name, 'state': 'absent'})
        self.registered.discard(name)
        for key, value in self.operator.items():
            assert self.operator_value(key) == value, 'absent lost the operator key %s' % key
        if not self.registered and not self.edited_since and self.ever_changed:
            assert self.read() == self.original, 'absent after present did not give back the original bytes'

    @precondition(lambda self: self.read() is not None)
    @rule(key=OPERATOR_KEYS, value=OPERATOR_VALUES)
    def operator_sets(self, key, value):
        self.operator_edit(key, value)
        self.operator[key] = value
        self.operator_text = self.read()
        self.edited_since = self.edited_since or self.ever_changed

    @invariant()
    def untouched_until_changed(self):
        if self.original is not None and not self.ever_changed:
            assert self.read() == self.operator_text


class DockerMachine(_ConfigMachine):
    module = docker_runtime
    file_name = 'daemon.json'
    extra = {'runtime_path': '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'}

    @initialize(original=st.sampled_from(DOCKER_ORIGINALS))
    def begin(self, original):
        self.start(original)

    def operator_edit(self, key, value):
        text = self.read()
        document = json.loads(text) if text.strip() else {}
        document['op-' + key] = value
        # The operator rewrites the whole file in a layout of their own.
        self.write(json.dumps(document, indent=2) + '\n')

    def operator_value(self, key):
        return json.loads(self.read() or '{}').get('op-' + key)

    @precondition(lambda self: self.read() is not None)
    @rule(name=NAMES, value=OPERATOR_VALUES)
    def operator_edits_our_entry(self, name, value):
        text = self.read()
        document = json.loads(text) if text.strip() else {}
        entry = (document.get('runtimes') or {}).get(name)
        if not isinstance(entry, dict):
            return
        entry['op-arg'] = value
        self.write(json.dumps(document, indent=2) + '\n')
        self.operator_text = self.read()
        self.edited_since = self.edited_since or self.ever_changed
        self.entry_keys = getattr(self, 'entry_keys', {})
        self.entry_keys[name] = value

    @invariant()
    def entry_keys_survive(self):
        text = self.read()
        for name, value in getattr(self, 'entry_keys', {}).items():
            entry = (json.loads(text or '{}').get('runtimes') or {}).get(name)
            assert isinstance(entry, dict) and entry.get('op-arg') == value, 'the operator key in runtimes.%s is lost' % name


class ContainerdMachine(_ConfigMachine):
    module = containerd_runtime
    file_name = 'config.toml'
    extra = {'binary_name': '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'}

    @initialize(original=st.sampled_from(CONTAINERD_ORIGINALS))
    def begin(self, original):
        self.start(original)

    def operator_edit(self, key, value):
        document = tomlkit.parse(self.read())
        if 'operator' not in document:
            document['operator'] = tomlkit.table()
        document['operator'][key] = value
        self.write(tomlkit.dumps(document))

    def operator_value(self, key):
        document = toml_editor.parse_config(self.read())
        return toml_editor.plain(document.get('operator', {})).get(key)


TestDockerUndo = DockerMachine.TestCase
TestDockerUndo.settings = FAST
TestContainerdUndo = ContainerdMachine.TestCase
TestContainerdUndo.settings = FAST
