# -*- coding: utf-8 -*-
"""The doctor's node evidence from the results its read-only tasks register (roles/doctor/tasks/node.yml), shaped as
Ansible registers them: real npu-smi samples, a real `containerd config dump`, skipped and failed reads."""

import base64
import copy
import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.doctor_node_evidence import doctor_node_evidence, doctor_torch_npu_version
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi
from ansible_collections.npu.ascend.plugins.plugin_utils import doctor_evidence

from conftest import SAMPLES_DIR

SKIPPED = {'changed': False, 'skipped': True, 'skip_reason': 'Conditional result was False', 'false_condition': 'x'}
OPTIONS = {'node': 'npu-a2-01', 'install_path': '/usr/local/Ascend', 'runtime_name': 'ascend',
           'docker_config': '/etc/docker/daemon.json', 'kubelet_dir': '/var/lib/kubelet', 'python': '/usr/bin/python3'}
# What `containerd config dump` prints of the parts read (containerd 1.7, config version 2).
CONTAINERD_DUMP = '''version = 2
root = "/var/lib/containerd"

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ascend]
          runtime_type = "io.containerd.runc.v2"
          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ascend.options]
            BinaryName = "/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime"
'''
PIP_SHOW = 'Name: torch-npu\nVersion: 2.1.0.post12\nSummary: torch_npu is an extension of PyTorch\n'
DAEMON_JSON = '{"runtimes": {"ascend": {"path": "/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime"}}}\n'


def _chips(sample):
    with open(os.path.join(SAMPLES_DIR, 'npu-smi', sample)) as handle:
        return npu_smi.parse_info(handle.read())


A2_SMI = _chips('910B4_25.0.rc1.1_info.txt')
A3_SMI = _chips('Ascend910-A3_24.1.rc3.7_info.txt')


def _probe(smi=None, **changes):
    smi = A2_SMI if smi is None else smi
    probe = {'npu_smi_path': '/usr/local/sbin/npu-smi', 'npu_smi_error': None,
             'npu_smi': {'chips': copy.deepcopy(smi['chips']), 'driver_version': smi['driver_version']},
             'engines_present': ['containerd', 'docker'], 'installed': {'driver': {'version': '25.0.rc1.1'}}}
    probe.update(changes)
    return probe


def _command(rc=0, stdout='', stderr='', msg=''):
    result = {'changed': False, 'rc': rc, 'stdout': stdout, 'stderr': stderr, 'cmd': ['x']}
    if rc != 0:
        result['msg'] = msg or 'non-zero return code'
    return result


def _results(**changes):
    results = {
        'facts': {'changed': False, 'ansible_facts': {'ascend': _probe()}},
        'containerd': _command(stdout=CONTAINERD_DUMP),
        'docker_stat': {'changed': False, 'stat': {'exists': True, 'path': '/etc/docker/daemon.json'}},
        'docker_content': {'changed': False, 'content': base64.b64encode(DAEMON_JSON.encode()).decode(), 'encoding': 'base64'},
        'kubelet_paths': {'changed': False, 'results': [{'stat': {'exists': True, 'isdir': True}},
                                                        {'stat': {'exists': True, 'isdir': False}}]},
        'torch_npu': _command(stdout=PIP_SHOW),
        'compat': {'changed': False, 'stack': {'driver': '25.0.rc1.1', 'torch_npu': '2.1.0.post12'},
                   'conflicts': [], 'unknown': ['torch_npu']},
        'hccn': SKIPPED,
    }
    results.update(changes)
    return results


def test_every_read_of_a_healthy_node_becomes_its_evidence():
    evidence = doctor_evidence.node_evidence(_results(), OPTIONS)
    assert evidence['node'] == 'npu-a2-01'
    assert evidence['install_path'] == '/usr/local/Ascend'
    assert evidence['facts'] == _probe()
    assert evidence['facts_error'] == ''
    assert evidence['npu_smi'] == {'ok': True, 'chips': A2_SMI['chips'], 'driver_version': A2_SMI['driver_version']}
    containerd = evidence['runtime']['containerd']
    assert containerd['ok'] is True
    assert containerd['config_version'] == 2
    assert containerd['default_runtime_name'] == 'runc'
    assert containerd['binary_name'] == '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'
    assert evidence['runtime']['docker'] == {'path': '/etc/docker/daemon.json', 'config_text': DAEMON_JSON}
    assert evidence['kubelet'] == {'path': '/var/lib/kubelet/device-plugins', 'dir_exists': True, 'socket': True}
    assert evidence['versions'] == {'stack': {'driver': '25.0.rc1.1', 'torch_npu': '2.1.0.post12'}, 'conflicts': [],
                                    'unknown': ['torch_npu']}
    assert evidence['torch_npu'] == {'python': '/usr/bin/python3', 'version': '2.1.0.post12', 'error': ''}
    assert evidence['hccn'] is None
    # An inference A2 (910B4) has no RoCE port of its own: no subnet rule.
    assert evidence['hccn_subnet_rule'] is None


def test_skipped_reads_give_no_evidence_of_their_kind():
    evidence = doctor_evidence.node_evidence(
        _results(containerd=SKIPPED, docker_stat=SKIPPED, docker_content=SKIPPED, torch_npu=SKIPPED, hccn=SKIPPED), OPTIONS)
    assert evidence['runtime'] == {'containerd': None, 'docker': None}
    assert evidence['torch_npu'] is None
    assert evidence['hccn'] is None


def test_a_missing_daemon_json_is_docker_without_a_config():
    evidence = doctor_evidence.node_evidence(
        _results(docker_stat={'changed': False, 'stat': {'exists': False}}, docker_content=SKIPPED), OPTIONS)
    assert evidence['runtime']['docker'] == {'path': '/etc/docker/daemon.json', 'config_text': None}


@pytest.mark.parametrize('changes, expected', [
    ({'npu_smi_path': None}, {'ok': False, 'error': 'npu-smi is not installed'}),
    ({'npu_smi_error': 'npu-smi failed (rc=255): dcmi module initialize failed. ret is -8005'},
     {'ok': False, 'error': 'npu-smi failed (rc=255): dcmi module initialize failed. ret is -8005'}),
])
def test_npu_smi_missing_or_failing_is_said_so(changes, expected):
    evidence = doctor_evidence.node_evidence(_results(facts={'ansible_facts': {'ascend': _probe(**changes)}}), OPTIONS)
    assert evidence['npu_smi'] == expected


def test_a_probe_that_failed_leaves_its_message_and_no_facts():
    evidence = doctor_evidence.node_evidence(_results(facts={'failed': True, 'msg': 'ascend_facts: timed out'}), OPTIONS)
    assert evidence['facts'] is None
    assert evidence['facts_error'] == 'ascend_facts: timed out'
    assert evidence['npu_smi'] == {'ok': False, 'error': 'npu-smi is not installed'}
    assert evidence['hccn_subnet_rule'] is None


@pytest.mark.parametrize('result, error', [
    (_command(rc=1, stderr='containerd: failed to load TOML from /etc/containerd/config.toml:\n  toml: line 3\n'),
     'containerd: failed to load TOML from /etc/containerd/config.toml: toml: line 3'),
    (_command(rc=2, msg='[Errno 2] No such file or directory: b\'containerd\''),
     "[Errno 2] No such file or directory: b'containerd'"),
])
def test_a_failed_containerd_dump_is_its_error_on_one_line(result, error):
    evidence = doctor_evidence.node_evidence(_results(containerd=result), OPTIONS)
    assert evidence['runtime']['containerd'] == {'ok': False, 'error': error}


def test_a_dump_that_is_no_containerd_config_stops_with_the_reason():
    with pytest.raises(ValueError, match='not valid TOML'):
        doctor_evidence.node_evidence(_results(containerd=_command(stdout='version = = 2')), OPTIONS)
    with pytest.raises(AnsibleFilterError, match='doctor_node_evidence: unknown containerd config version 9'):
        doctor_node_evidence(_results(containerd=_command(stdout='version = 9\n')), OPTIONS)


def test_a_compat_check_that_failed_is_its_message():
    evidence = doctor_evidence.node_evidence(_results(compat={'failed': True, 'msg': 'matrix unreadable'}), OPTIONS)
    assert evidence['versions'] == {'error': 'matrix unreadable'}
    evidence = doctor_evidence.node_evidence(_results(compat={'failed': True}), OPTIONS)
    assert evidence['versions'] == {'error': 'ascend_compat failed'}


def test_torch_npu_not_installed_is_no_version_and_pips_words():
    result = _command(rc=1, stderr='WARNING: Package(s) not found: torch_npu\n')
    evidence = doctor_evidence.node_evidence(_results(torch_npu=result), OPTIONS)
    assert evidence['torch_npu'] == {'python': '/usr/bin/python3', 'version': None,
                                     'error': 'WARNING: Package(s) not found: torch_npu'}


@pytest.mark.parametrize('result, version', [
    (_command(stdout=PIP_SHOW), '2.1.0.post12'),
    (_command(stdout='Name: torch-npu\nSummary: no version line\n'), ''),
    (_command(rc=1, stdout='Version: 9.9\n', stderr='broken'), ''),
    (SKIPPED, ''),
])
def test_the_torch_npu_version_comes_from_the_version_line_of_a_pip_show_that_worked(result, version):
    assert doctor_torch_npu_version(result) == version


def test_an_a3_training_node_gets_its_ports_and_its_subnet_rule():
    hccn = {'changed': False, 'hccn': {'npus': [{'id': index, 'address': '10.0.0.%d' % index} for index in range(16)]}}
    results = _results(facts={'ansible_facts': {'ascend': _probe(smi=A3_SMI)}}, hccn=hccn)
    evidence = doctor_evidence.node_evidence(results, OPTIONS)
    assert evidence['hccn'] == {'ok': True, 'npus': hccn['hccn']['npus']}
    assert evidence['hccn_subnet_rule'] is not None
    failed = doctor_evidence.node_evidence(_results(hccn={'failed': True, 'msg': 'hccn_tool timed out'}), OPTIONS)
    assert failed['hccn'] == {'ok': False, 'error': 'hccn_tool timed out'}


def test_a_result_or_an_option_left_out_is_named():
    results = _results()
    del results['compat']
    with pytest.raises(AnsibleFilterError, match='doctor_node_evidence: missing compat, kubelet_dir'):
        doctor_node_evidence(results, dict((key, value) for key, value in OPTIONS.items() if key != 'kubelet_dir'))


@pytest.mark.parametrize('results, options', [('facts', OPTIONS), ({'facts': 'x'}, OPTIONS), (_results(), ['node'])])
def test_input_that_is_not_registered_results_is_refused(results, options):
    with pytest.raises(AnsibleFilterError, match='doctor_node_evidence'):
        doctor_node_evidence(results, options)


def test_pip_show_that_is_not_a_result_is_refused():
    with pytest.raises(AnsibleFilterError, match='doctor_torch_npu_version expects'):
        doctor_torch_npu_version('Version: 1')
