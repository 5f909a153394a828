# -*- coding: utf-8 -*-
"""The npu_doctor_findings filter: what a playbook gets, and how bad input fails."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.npu_doctor_findings import FilterModule, npu_doctor_findings

EVIDENCE = {
    'node': 'npu-01',
    'facts': {'npu_count': 8, 'chip_family': '910b', 'k8s_resource_name': 'huawei.com/Ascend910',
              'accelerator_label': 'huawei-Ascend910', 'npu_smi_path': '/usr/local/sbin/npu-smi',
              'reboot_pending': False, 'device_nodes': ['/dev/davinci_manager'],
              'installed': {'driver': {'version': '25.0.rc1.1'}, 'docker_runtime': {'version': '7.3.0'}}},
    'npu_smi': {'ok': False, 'error': 'npu-smi failed (rc=255): dcmi module initialize failed. ret is -8005'},
    'runtime': {'containerd': None, 'docker': None},
}


def test_registered_under_its_name():
    assert FilterModule().filters() == {'npu_doctor_findings': npu_doctor_findings}


def test_one_evidence_dict_or_a_list_without_a_cluster():
    findings = npu_doctor_findings(EVIDENCE)
    assert findings == npu_doctor_findings([EVIDENCE], {'available': False})
    assert [(item['node'], item['component']) for item in findings] == [('npu-01', 'npu-smi')]
    assert 'reboot the node' in findings[0]['fix']


def test_bad_input_becomes_a_filter_error():
    with pytest.raises(AnsibleFilterError, match='expects a list'):
        npu_doctor_findings('npu-01')
    with pytest.raises(AnsibleFilterError, match='cluster must be a dict'):
        npu_doctor_findings([EVIDENCE], [])
    with pytest.raises(AnsibleFilterError, match='unknown doctor option'):
        npu_doctor_findings([EVIDENCE], {}, {'nope': 1})
    with pytest.raises(AnsibleFilterError, match='"node" name'):
        npu_doctor_findings([{'facts': {}}])
