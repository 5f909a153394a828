# -*- coding: utf-8 -*-
import os
import subprocess

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.ascend_package import FilterModule, ascend_package, ascend_version_sort
from conftest import COLLECTIONS_ROOT, playbook_binary


def test_registered_names():
    assert FilterModule().filters() == {'ascend_package': ascend_package, 'ascend_version_sort': ascend_version_sort}


def test_ascend_package_from_path_and_find_result():
    expected = {
        'component': 'driver', 'chip': '910b', 'version': '25.0.rc1.1', 'arch': 'x86_64', 'soc': False,
        'filename': 'Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run', 'patch': None,
    }
    path = '/opt/pkgs/Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run'
    assert ascend_package(path) == expected
    assert ascend_package({'path': path, 'size': 1}) == expected


@pytest.mark.parametrize('value, message', [
    ('README.md', 'README.md is not a Huawei Ascend package'),
    (42, 'expected a file name'),
    (None, 'expected a file name'),
])
def test_ascend_package_errors(value, message):
    with pytest.raises(AnsibleFilterError, match=message):
        ascend_package(value)


def test_version_sort():
    versions = ['24.1.0', '24.1.RC2', '25.0.rc1.1', '24.1.rc1', '8.0.0', '24.1.rc3.7', '24.1.0.1']
    assert ascend_version_sort(versions) == ['8.0.0', '24.1.rc1', '24.1.RC2', '24.1.rc3.7', '24.1.0', '24.1.0.1',
                                             '25.0.rc1.1']
    assert ascend_version_sort(versions, reverse=True)[0] == '25.0.rc1.1'
    assert ascend_version_sort(('6.0.0.SPC1', '6.0.0')) == ['6.0.0', '6.0.0.SPC1']
    assert ascend_version_sort([]) == []


@pytest.mark.parametrize('value, message', [
    ('24.1.0', 'expected a list'),
    ({'a': 1}, 'expected a list'),
    (['24.1.0', 24], 'is not a version string'),
    (['24.1.0', 'latest'], 'latest'),
])
def test_version_sort_errors(value, message):
    with pytest.raises(AnsibleFilterError, match=message):
        ascend_version_sort(value)


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.assert:
        that:
          - "'24.1.rc1' is npu.ascend.ascend_version('24.1.0', '<')"
          - "'24.1.RC2' is npu.ascend.ascend_version('24.1.rc2')"
          - "'8.1.RC1.alpha002' is not npu.ascend.ascend_version('8.1.RC1', 'ge')"
          - "('Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run' | npu.ascend.ascend_package).arch == 'x86_64'"
          - "(['24.1.0', '24.1.rc2', '25.0.rc1.1'] | npu.ascend.ascend_version_sort | last) == '25.0.rc1.1'"
    - name: A bad version fails the task with the plugin's message
      ansible.builtin.debug:
        msg: "{{ 'latest' is npu.ascend.ascend_version('24.1.0', '<') }}"
      register: bad
      ignore_errors: true
    - ansible.builtin.assert:
        that:
          - bad is failed
          - "'latest' in bad.msg"
"""


def test_plugins_work_inside_ansible_playbook(tmp_path):
    """End to end: Ansible resolves npu.ascend.* through the collections path and runs them."""
    playbook = tmp_path / 'plugins.yml'
    playbook.write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_ROOT, ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCALHOST_WARNING='0', ANSIBLE_INVENTORY_UNPARSED_WARNING='0', LC_ALL='C.UTF-8')
    completed = subprocess.run([playbook_binary(), '-i', 'localhost,', '-c', 'local', str(playbook)],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                               timeout=300, check=False)
    assert completed.returncode == 0, completed.stdout
    assert 'failed=0' in completed.stdout
