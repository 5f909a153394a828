# -*- coding: utf-8 -*-
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.ascend_kernels_component import (
    FilterModule, ascend_kernels_component, ascend_toolkit_set_env)


def test_registered_name():
    assert FilterModule().filters() == {'ascend_kernels_component': ascend_kernels_component,
                                        'ascend_toolkit_set_env': ascend_toolkit_set_env}


def test_both_sides_of_the_layout_change():
    assert ascend_kernels_component('8.2.RC1') == 'kernels'
    assert ascend_kernels_component('8.5.0') == 'ops'


def test_a_text_that_is_no_version_names_itself():
    with pytest.raises(AnsibleFilterError, match="'latest' is not a CANN version"):
        ascend_kernels_component('latest')


@pytest.mark.parametrize('version, install_path, expected', [
    ('8.2.RC1', '/usr/local/Ascend', '/usr/local/Ascend/ascend-toolkit/set_env.sh'),
    ('8.3.RC1', '/opt/ascend/', '/opt/ascend/ascend-toolkit/set_env.sh'),
    ('8.5.0', '/usr/local/Ascend', '/usr/local/Ascend/cann/set_env.sh'),
    ('9.0.RC1', '/usr/local/Ascend', '/usr/local/Ascend/cann/set_env.sh'),
])
def test_the_toolkit_script_follows_the_layout_change(version, install_path, expected):
    assert ascend_toolkit_set_env(version, install_path) == expected


def test_the_toolkit_script_of_a_text_that_is_no_version_is_refused():
    with pytest.raises(AnsibleFilterError, match='ascend_toolkit_set_env'):
        ascend_toolkit_set_env('latest')
