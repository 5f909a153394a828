# -*- coding: utf-8 -*-
"""The containerd_runtime_stamped filter refuses a request it cannot fingerprint whole."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.containerd_runtime_stamped import containerd_runtime_stamped

ASKED = dict(name='ascend', binary_name='/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime',
             default=True, config_version=None, allow_runc_rewrite=False)


def test_a_config_the_probe_did_not_read_is_not_vouched_for():
    assert containerd_runtime_stamped({}, '/etc/containerd/config.toml', **ASKED) is False
    assert containerd_runtime_stamped({'/etc/containerd/config.toml': None}, '/etc/containerd/config.toml', **ASKED) is False


@pytest.mark.parametrize('options, message', [
    ({'default': True}, 'missing options: name, binary_name, config_version, allow_runc_rewrite'),
    (dict(ASKED, backup=True), 'unknown options: backup'),
])
def test_a_request_given_in_part_or_with_unknown_options_is_refused(options, message):
    with pytest.raises(AnsibleFilterError, match=message):
        containerd_runtime_stamped({}, '/etc/containerd/config.toml', **options)


def test_the_probe_s_files_must_be_a_dict():
    with pytest.raises(AnsibleFilterError, match='a dict'):
        containerd_runtime_stamped(['/etc/containerd/config.toml'], '/etc/containerd/config.toml', **ASKED)
