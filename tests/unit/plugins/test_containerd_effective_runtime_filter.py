# -*- coding: utf-8 -*-
"""The containerd_effective_runtime filter over real `containerd config default` outputs."""

import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.containerd_effective_runtime import containerd_effective_runtime

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        'fixtures', 'containerd')


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


@pytest.mark.parametrize('name, version, plugin', [
    ('default-1.6.toml', 2, 'io.containerd.grpc.v1.cri'),
    ('default-2.4.2.toml', 4, 'io.containerd.cri.v1.runtime'),
    ('k3s-v1-legacy.toml', 1, 'cri'),
])
def test_reads_runc_from_each_config_version(name, version, plugin):
    effective = containerd_effective_runtime(fixture(name), 'runc')
    assert (effective['config_version'], effective['cri_plugin']) == (version, plugin)
    assert effective['runtime'] is not None


def test_unregistered_runtime_is_none():
    effective = containerd_effective_runtime(fixture('default-1.6.toml'))
    assert effective['runtime'] is None and effective['binary_name'] is None
    assert effective['default_runtime_name'] == 'runc'


def test_bad_input_fails_clearly():
    with pytest.raises(AnsibleFilterError, match='not valid TOML'):
        containerd_effective_runtime('[plugins')
    with pytest.raises(AnsibleFilterError, match='unknown containerd config version 9'):
        containerd_effective_runtime('version = 9\n')
    with pytest.raises(AnsibleFilterError, match='expected the text'):
        containerd_effective_runtime(None)


def test_binary_name_in_another_letter_case_is_read():
    text = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ascend.options]\n'
            '  binaryName = "/opt/wrapper"\n')
    assert containerd_effective_runtime(text)['binary_name'] == '/opt/wrapper'
