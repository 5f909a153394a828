# -*- coding: utf-8 -*-
"""Run ascend_facts against a sysfs-shaped directory and a temporary install path."""

import hashlib
import json
import os
import shutil
import socket
import time

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.packages import reboot_marker
from ansible_collections.npu.ascend.plugins.modules import ascend_facts
from conftest import write_tool

SAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'samples', 'files')


def pci_function(root, address, device, subsystem_device, vendor='0x19e5', pci_class='0x120000'):
    directory = root / address
    directory.mkdir(parents=True)
    for name, value in (('vendor', vendor), ('device', device), ('class', pci_class),
                        ('subsystem_vendor', '0x19e5'), ('subsystem_device', subsystem_device),
                        ('revision', '0x20')):
        (directory / name).write_text(value + '\n')


@pytest.fixture
def node(tmp_path, monkeypatch):
    sysfs = tmp_path / 'sys'
    pci_function(sysfs, '0000:c1:00.0', '0xd802', '0x3002')
    pci_function(sysfs, '0000:c2:00.0', '0xd802', '0x3002')
    pci_function(sysfs, '0000:00:1f.0', '0x1234', '0x0000', vendor='0x8086', pci_class='0x060100')
    monkeypatch.setattr(ascend_facts, 'SYSFS_PCI_DEVICES', str(sysfs))
    monkeypatch.setattr(reboot_marker, 'REBOOT_MARKER_PATH', str(tmp_path / 'reboot-required.json'))
    install_path = tmp_path / 'Ascend'
    (install_path / 'driver').mkdir(parents=True)
    with open(os.path.join(SAMPLES, 'driver_version.info_25.0.rc1.1.txt')) as handle:
        (install_path / 'driver' / 'version.info').write_text(handle.read())
    return {'tmp': tmp_path, 'install_path': str(install_path)}


def test_facts_from_sysfs_and_version_files(node, run_module):
    result = run_module(ascend_facts, {'install_path': node['install_path']}, check_mode=True, diff=False)
    assert result['changed'] is False
    facts = result['ansible_facts']['ascend']
    assert facts['pci_source'] == 'sysfs'
    assert facts['npu_count'] == 2
    assert [device['address'] for device in facts['pci_devices']] == ['0000:c1:00.0', '0000:c2:00.0']
    assert facts['chip_family'] == '910b' and facts['product'] == 'Atlas 800I A2'
    assert facts['k8s_resource_name'] == 'huawei.com/Ascend910'
    assert facts['installed']['driver']['version'] == '25.0.rc1.1'
    assert facts['installed']['toolkit'] is None
    assert facts['reboot_pending'] is False


def test_reboot_pending_follows_the_marker(node, run_module):
    boot = reboot_marker.read_current_boot()
    marker = reboot_marker.add_reboot_reason({}, boot, 'driver', '25.0.rc1.1', 'now')
    with open(reboot_marker.REBOOT_MARKER_PATH, 'w') as handle:
        json.dump(marker, handle)
    facts = run_module(ascend_facts, {'install_path': node['install_path']},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['reboot_pending'] is True
    assert facts['reboot_reasons'][0]['component'] == 'driver'
    assert facts['reboot_marker'] == reboot_marker.REBOOT_MARKER_PATH
    marker['pid1_start_time'] = 'an earlier boot'
    with open(reboot_marker.REBOOT_MARKER_PATH, 'w') as handle:
        json.dump(marker, handle)
    facts = run_module(ascend_facts, {'install_path': node['install_path']},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['reboot_pending'] is False


def test_lspci_fallback_when_sysfs_is_unreadable(node, run_module, monkeypatch, tmp_path):
    monkeypatch.setattr(ascend_facts, 'SYSFS_PCI_DEVICES', str(tmp_path / 'missing'))
    lspci = tmp_path / 'bin' / 'lspci'
    lspci.parent.mkdir()
    lspci.write_text('#!/bin/sh\nprintf "Slot:\\t0000:01:00.0\\nClass:\\tProcessing accelerators [1200]\\n'
                     'Vendor:\\tHuawei Technologies Co., Ltd. [19e5]\\nDevice:\\tDevice [d500]\\n'
                     'SVendor:\\tHuawei Technologies Co., Ltd. [19e5]\\nSDevice:\\tDevice [0110]\\nRev:\\t23\\n\\n"\n')
    lspci.chmod(0o755)
    monkeypatch.setenv('PATH', '%s:%s' % (lspci.parent, os.environ['PATH']))
    facts = run_module(ascend_facts, {'install_path': node['install_path']},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['pci_source'] == 'lspci'
    assert facts['npu_count'] == 1 and facts['chip_family'] == '310p' and facts['product'] == 'Atlas 300I Duo'


def test_an_lspci_that_hangs_is_stopped_and_named_not_waited_for(node, run_module, monkeypatch, tmp_path):
    monkeypatch.setattr(ascend_facts, 'SYSFS_PCI_DEVICES', str(tmp_path / 'missing'))
    monkeypatch.setattr(ascend_facts, 'PROBE_TIMEOUT_SECONDS', 1)
    monkeypatch.setattr(ascend_facts, 'PROBE_KILL_AFTER_SECONDS', 1)
    lspci = tmp_path / 'bin' / 'lspci'
    lspci.parent.mkdir()
    lspci.write_text('#!/bin/sh\nexec sleep 60\n')
    lspci.chmod(0o755)
    monkeypatch.setenv('PATH', '%s:%s' % (lspci.parent, os.environ['PATH']))
    warnings = []
    monkeypatch.setattr(ascend_facts.AnsibleModule, 'warn', lambda module, text, **kwargs: warnings.append(text))
    started = time.time()
    facts = run_module(ascend_facts, {'install_path': node['install_path']},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert time.time() - started < 30
    assert facts['npu_count'] == 0 and facts['pci_source'] == 'none'
    assert any(warning.startswith('%s -vmm -nn -D did not answer within 1 s' % lspci) for warning in warnings), warnings


@pytest.mark.parametrize('relative, content, found', [
    ('driver/version.info', b'Version=25.0.rc1.1$(reboot)\n', "'25.0.rc1.1$(reboot)'"),
    ('driver/version.info', b'Version=25.0.rc1.1\nInnerversion=V100R001C23\nreboot\n\xc3\x28\n', 'is not UTF-8 text'),
    ('ascend-toolkit/latest/x86_64-linux/ascend_toolkit_install.info', b'version=8.2.RC1\nx=1\n\n;\nversion=8 2\n',
     "'8 2'"),
    ('nnal/atb/latest/version.info', b'Ascend-cann-atb : 8.2.RC1`id`\n', "'8.2.RC1`id`'"),
])
def test_a_version_file_no_huawei_installer_wrote_fails_with_the_file_and_what_was_found(
        node, run_module, relative, content, found):
    path = os.path.join(node['install_path'], relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as handle:
        handle.write(content)
    result = run_module(ascend_facts, {'install_path': node['install_path']}, check_mode=True, diff=False)
    assert result['failed'] and path in result['msg'] and found in result['msg'] and 'Fix:' in result['msg']
    assert 'Traceback' not in result['msg'] and 'ansible_facts' not in result
    with open(path, 'rb') as handle:
        assert handle.read() == content


def test_the_probe_reads_paths_free_space_and_os_release(node, run_module, monkeypatch):
    os_release = node['tmp'] / 'os-release'
    os_release.write_text('PRETTY_NAME="openEuler 24.03 (LTS-SP1)"\nNAME="openEuler"\nVERSION_ID="24.03"\n')
    monkeypatch.setattr(ascend_facts, 'OS_RELEASE', str(os_release))
    dangling = node['tmp'] / 'dangling'
    dangling.symlink_to(node['tmp'] / 'nowhere')
    wanted = [node['install_path'] + '/driver', node['install_path'] + '/firmware', str(dangling)]
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'paths': wanted,
                                      'free_space_path': str(node['tmp'])},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['paths_present'] == [node['install_path'] + '/driver', str(dangling)]
    stat = os.statvfs(str(node['tmp']))
    assert abs(facts['free_kb'] - stat.f_bavail * stat.f_frsize // 1024) < 1024 * 64
    assert facts['os'] == 'openEuler 24.03'
    monkeypatch.setattr(ascend_facts, 'OS_RELEASE', str(node['tmp'] / 'missing'))
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'free_space_path': str(node['tmp'] / 'no')},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['os'] is None and facts['free_kb'] is None and facts['paths_present'] == []


def test_the_probe_reports_the_files_it_is_given(node, run_module):
    script = node['tmp'] / 'ascend-cann.sh'
    script.write_text('. /usr/local/Ascend/ascend-toolkit/set_env.sh\n')
    script.chmod(0o640)
    link = node['tmp'] / 'link-to-script'
    link.symlink_to(script)
    directory = node['tmp'] / 'a-directory'
    directory.mkdir()
    dangling = node['tmp'] / 'dangling'
    dangling.symlink_to(node['tmp'] / 'nowhere')
    asked = [str(script), str(link), str(directory), str(dangling), str(node['tmp'] / 'missing')]
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'files': asked},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    wanted = {'sha1': hashlib.sha1(script.read_bytes()).hexdigest(), 'mode': '0640',
              'uid': os.getuid(), 'gid': os.getgid()}
    assert facts['files'] == {str(script): wanted, str(link): wanted, str(directory): None,
                              str(dangling): None, str(node['tmp'] / 'missing'): None}
    script.write_text('changed\n')
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'files': [str(script)]},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['files'][str(script)]['sha1'] != wanted['sha1']
    facts = run_module(ascend_facts, {'install_path': node['install_path']},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['files'] == {}


def test_the_probe_reports_the_stamp_beside_a_file_only_where_there_is_one(node, run_module):
    config = node['tmp'] / 'config.toml'
    config.write_text('version = 2\n')
    stamp = node['tmp'] / '.config.toml.npu_ascend.converged'
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'files': [str(config)]},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert 'stamp_sha1' not in facts['files'][str(config)]
    stamp.mkdir()
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'files': [str(config)]},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert 'stamp_sha1' not in facts['files'][str(config)]
    stamp.rmdir()
    stamp.write_bytes(b'{}\n')
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'files': [str(config)]},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['files'][str(config)]['stamp_sha1'] == hashlib.sha1(b'{}\n').hexdigest()


@pytest.fixture
def engines_path(tmp_path, monkeypatch):
    """A PATH holding only stand-ins for systemctl and containerd (and the coreutils the module uses)."""
    bin_dir = tmp_path / 'engines-bin'
    bin_dir.mkdir()
    for name in ('timeout', 'sleep'):
        (bin_dir / name).symlink_to(shutil.which(name))
    monkeypatch.setenv('PATH', str(bin_dir))
    return bin_dir


def test_the_probe_reads_the_engines_in_one_systemctl_call(node, run_module, engines_path):
    write_tool(engines_path, 'systemctl',
               'echo "$*" >> "%s/calls"\n'
               'printf "Id=containerd.service\\nLoadState=loaded\\nActiveState=active\\n\\n'
               'Id=docker.service\\nLoadState=not-found\\nActiveState=inactive\\n\\n'
               'Id=kubelet.service\\nLoadState=loaded\\nActiveState=active\\n"\n' % engines_path)
    write_tool(engines_path, 'containerd', 'echo "containerd github.com/containerd/containerd/v2 v2.4.2 0b5dc3bf"\n')
    facts = run_module(ascend_facts, {'install_path': node['install_path']},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['services']['containerd'] == {'load_state': 'loaded', 'active_state': 'active'}
    assert facts['services']['docker']['load_state'] == 'not-found'
    assert facts['services']['kubelet']['active_state'] == 'active'
    assert facts['engines_present'] == ['containerd']
    assert (facts['containerd']['version'], facts['containerd']['major']) == ('2.4.2', 2)
    assert (engines_path / 'calls').read_text().count('show') == 1
    assert set(facts['python_libraries']) == {'tomlkit'}


def test_without_systemctl_or_containerd_the_engines_are_unknown(node, run_module, engines_path):
    facts = run_module(ascend_facts, {'install_path': node['install_path']},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['services'] == {} and facts['containerd'] is None and facts['engines_present'] == []


def test_a_failing_systemctl_is_a_warning_and_no_engine(node, run_module, engines_path, monkeypatch):
    # Module warnings may go to the controller's display instead of the result; record them at the source.
    warnings = []
    monkeypatch.setattr(ascend_facts.AnsibleModule, 'warn', lambda module, text, **kwargs: warnings.append(text))
    write_tool(engines_path, 'systemctl', 'echo "Failed to connect to bus" >&2\nexit 1\n')
    result = run_module(ascend_facts, {'install_path': node['install_path']}, check_mode=True, diff=False)
    assert result['ansible_facts']['ascend']['services'] == {}
    assert any('systemctl show failed' in warning and 'Failed to connect to bus' in warning for warning in warnings)


def test_a_stuck_systemctl_fails_with_a_message(node, run_module, engines_path, monkeypatch):
    monkeypatch.setattr(ascend_facts, 'PROBE_TIMEOUT_SECONDS', 1)
    write_tool(engines_path, 'systemctl', 'exec sleep 30\n')
    result = run_module(ascend_facts, {'install_path': node['install_path']}, check_mode=True, diff=False)
    assert result['failed'] and 'did not answer within 1 s' in result['msg'] and 'Fix:' in result['msg']


NPU_SMI_SAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'samples', 'npu-smi')
NPU_SMI_SYNTHETIC = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'npu_smi_synthetic')


def _npu_smi(engines_path, info, rc=0):
    write_tool(engines_path, 'npu-smi',
               'echo "$*" >> "%s/npu-smi-calls"\n'
               'case "$*" in\n'
               '  info) cat "%s"; exit %d;;\n'
               '  "info -t board -i "*) cat "%s";;\n'
               '  *) exit 9;;\n'
               'esac\n' % (engines_path, info, rc, os.path.join(NPU_SMI_SAMPLES, '910-D801_23.0.5_info-t-board-i0.txt')))
    if not (engines_path / 'cat').exists():
        (engines_path / 'cat').symlink_to('/bin/cat')


def test_npu_smi_is_left_alone_unless_asked_for(node, run_module, engines_path):
    _npu_smi(engines_path, os.path.join(NPU_SMI_SAMPLES, '910B4_25.0.rc1.1_info.txt'))
    facts = run_module(ascend_facts, {'install_path': node['install_path']},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert 'npu_smi' not in facts and 'npu_smi_error' not in facts
    assert facts['npu_smi_path'] == str(engines_path / 'npu-smi')
    assert not (engines_path / 'npu-smi-calls').exists()


@pytest.mark.parametrize('what, calls', [('info', ['info']), ('board', ['info'] + ['info -t board -i %d' % n for n in range(8)]),
                                         ('first_board', ['info', 'info -t board -i 0'])])
def test_the_probe_reads_npu_smi_as_npu_smi_info_does(node, run_module, engines_path, what, calls):
    _npu_smi(engines_path, os.path.join(NPU_SMI_SAMPLES, '910B4_25.0.rc1.1_info.txt'))
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': what},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['npu_smi_error'] is None
    assert facts['npu_smi']['driver_version'] == '25.0.rc1.1' and len(facts['npu_smi']['chips']) == 8
    assert (engines_path / 'npu-smi-calls').read_text().splitlines() == calls
    assert ('boards' in facts['npu_smi']) == (what != 'info')


def test_a_probe_after_an_installer_keeps_the_earlier_npu_smi_reading(node, run_module, engines_path):
    _npu_smi(engines_path, os.path.join(NPU_SMI_SAMPLES, '910B4_25.0.rc1.1_info.txt'))
    earlier = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info'},
                         check_mode=True, diff=False)['ansible_facts']['ascend']
    (engines_path / 'npu-smi-calls').unlink()
    kept = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi_from': earlier},
                      check_mode=True, diff=False)['ansible_facts']['ascend']
    assert (kept['npu_smi'], kept['npu_smi_error']) == (earlier['npu_smi'], None)
    assert not (engines_path / 'npu-smi-calls').exists()
    # An earlier probe without a reading gives none; asking for a reading reads afresh.
    assert 'npu_smi' not in run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi_from': {'arch': 'x'}},
                                       check_mode=True, diff=False)['ansible_facts']['ascend']
    fresh = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info',
                                      'npu_smi_from': {'npu_smi': None, 'npu_smi_error': 'stale'}},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert fresh['npu_smi_error'] is None and (engines_path / 'npu-smi-calls').read_text().splitlines() == ['info']


def test_first_board_reads_on_until_a_board_id_is_a_number(node, run_module, engines_path):
    board = engines_path / 'board-na.txt'
    with open(os.path.join(NPU_SMI_SAMPLES, '910-D801_23.0.5_info-t-board-i0.txt')) as handle:
        board.write_text(handle.read().replace('0x02', 'NA'))
    write_tool(engines_path, 'npu-smi',
               'echo "$*" >> "%s/npu-smi-calls"\n'
               'case "$*" in\n'
               '  info) cat "%s";;\n'
               '  "info -t board -i 0"|"info -t board -i 1") cat "%s";;\n'
               '  "info -t board -i "*) cat "%s";;\n'
               'esac\n' % (engines_path, os.path.join(NPU_SMI_SAMPLES, '910B4_25.0.rc1.1_info.txt'), board,
                           os.path.join(NPU_SMI_SAMPLES, '910-D801_23.0.5_info-t-board-i0.txt')))
    if not (engines_path / 'cat').exists():
        (engines_path / 'cat').symlink_to('/bin/cat')
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'first_board'},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert (engines_path / 'npu-smi-calls').read_text().splitlines() == ['info'] + [
        'info -t board -i %d' % n for n in range(3)]
    assert [board_read['board_id'] for board_read in facts['npu_smi']['boards']] == ['NA', 'NA', '0x02']


def test_an_npu_smi_error_is_a_fact_not_a_failure(node, run_module, engines_path):
    _npu_smi(engines_path, os.path.join(NPU_SMI_SYNTHETIC, 'error_dcmi_-8005.txt'), rc=1)
    result = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info'}, check_mode=True, diff=False)
    facts = result['ansible_facts']['ascend']
    assert not result.get('failed') and facts['npu_smi'] is None
    assert '-8005' in facts['npu_smi_error'] and 'driver is not loaded' in facts['npu_smi_error']
    # The rest of the probe is there as usual.
    assert facts['npu_count'] == 2 and facts['installed']['driver']['version'] == '25.0.rc1.1'


def test_a_hung_npu_smi_is_stopped_and_recorded(node, run_module, engines_path, monkeypatch):
    monkeypatch.setattr('ansible_collections.npu.ascend.plugins.module_utils.hardware.tool_runner.KILL_AFTER_SECONDS', 1)
    write_tool(engines_path, 'npu-smi', "trap '' TERM\nsleep 30\n")
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info', 'npu_smi_timeout': 1},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['npu_smi'] is None and 'did not answer within 1 seconds' in facts['npu_smi_error']


def test_without_npu_smi_there_is_nothing_to_read(node, run_module, engines_path, monkeypatch):
    monkeypatch.setattr('ansible_collections.npu.ascend.plugins.module_utils.hardware.npu_smi_runner.NPU_SMI_DIRS', [])
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info'},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['npu_smi_path'] is None and facts['npu_smi'] is None and facts['npu_smi_error'] is None


def _npu_smi_with_vnpus(engines_path, info, first_chip_vnpus, other_chips_vnpus):
    write_tool(engines_path, 'npu-smi',
               'echo "$*" >> "%s/npu-smi-calls"\n'
               'case "$*" in\n'
               '  info) cat "%s";;\n'
               '  "info -t info-vnpu -i 8 -c 0") cat "%s";;\n'
               '  "info -t info-vnpu -i "*) cat "%s";;\n'
               '  *) exit 9;;\n'
               'esac\n' % (engines_path, info, first_chip_vnpus, other_chips_vnpus))
    if not (engines_path / 'cat').exists():
        (engines_path / 'cat').symlink_to('/bin/cat')


def test_the_probe_reads_the_vnpus_of_every_chip_that_can_be_split(node, run_module, engines_path):
    _npu_smi_with_vnpus(engines_path, os.path.join(NPU_SMI_SYNTHETIC, '310P3-duo_24.1.rc2_info.txt'),
                        os.path.join(NPU_SMI_SYNTHETIC, 'info-vnpu_310P3_three.txt'),
                        os.path.join(NPU_SMI_SYNTHETIC, 'info-vnpu_910B4_empty.txt'))
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info', 'vnpus': True},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['npu_smi_error'] is None
    assert (engines_path / 'npu-smi-calls').read_text().splitlines() == ['info'] + [
        'info -t info-vnpu -i %d -c %d' % ids for ids in ((8, 0), (8, 1), (9, 0), (9, 1))]
    vnpus = facts['npu_smi']['vnpus']
    assert [(chip['npu_id'], chip['chip_id'], chip['name']) for chip in vnpus] == [
        (8, 0, '310P3'), (8, 1, '310P3'), (9, 0, '310P3'), (9, 1, '310P3')]
    assert [(vnpu['vnpu_id'], vnpu['template'], vnpu['resource']) for vnpu in vnpus[0]['vnpus']] == [
        (100, 'vir02', 'Ascend310P-2c'), (101, 'vir02_1c', 'Ascend310P-2c.1cpu'), (102, 'vir02', 'Ascend310P-2c')]
    assert vnpus[0]['resources'] == {'Ascend310P-2c': 2, 'Ascend310P-2c.1cpu': 1}
    assert [chip['resources'] for chip in vnpus[1:]] == [{}, {}, {}]
    # Without the option, no vNPU is read.
    (engines_path / 'npu-smi-calls').unlink()
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info'},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert 'vnpus' not in facts['npu_smi']
    assert (engines_path / 'npu-smi-calls').read_text().splitlines() == ['info']


def test_an_a3_is_asked_for_the_vnpus_of_each_of_its_16_dies(node, run_module, engines_path):
    # An A3 prints its dies as "Ascend910", chips 0 and 1 of NPUs 0-7: each die is split on its own.
    _npu_smi_with_vnpus(engines_path, os.path.join(NPU_SMI_SAMPLES, 'Ascend910-A3_24.1.rc3.7_info.txt'),
                        os.path.join(NPU_SMI_SYNTHETIC, 'info-vnpu_A3-training_empty.txt'),
                        os.path.join(NPU_SMI_SYNTHETIC, 'info-vnpu_A3-training_empty.txt'))
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info', 'vnpus': True},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['npu_smi_error'] is None, facts['npu_smi_error']
    assert (engines_path / 'npu-smi-calls').read_text().splitlines() == ['info'] + [
        'info -t info-vnpu -i %d -c %d' % (npu, die) for npu in range(8) for die in (0, 1)]
    assert [(chip['npu_id'], chip['chip_id'], chip['vnpus']) for chip in facts['npu_smi']['vnpus']] == [
        (npu, die, []) for npu in range(8) for die in (0, 1)]


def test_chips_that_cannot_be_split_are_not_asked_for_vnpus(node, run_module, engines_path):
    # A 310B (Atlas 200I/500 A2): no static vNPU templates known to the collection.
    _npu_smi(engines_path, os.path.join(NPU_SMI_SAMPLES, '310B4_23.0.rc3_info.txt'))
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info', 'vnpus': True},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['npu_smi_error'] is None and facts['npu_smi']['vnpus'] == []
    assert (engines_path / 'npu-smi-calls').read_text().splitlines() == ['info']


def test_vnpus_that_cannot_be_read_are_an_npu_smi_error(node, run_module, engines_path):
    garbled = engines_path / 'garbled.txt'
    garbled.write_text('| Total number of vnpu: 1 |\n')
    _npu_smi_with_vnpus(engines_path, os.path.join(NPU_SMI_SYNTHETIC, '310P3-duo_24.1.rc2_info.txt'),
                        str(garbled), str(garbled))
    result = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info', 'vnpus': True},
                        check_mode=True, diff=False)
    facts = result['ansible_facts']['ascend']
    assert not result.get('failed') and facts['npu_smi'] is None
    assert 'info -t info-vnpu' in facts['npu_smi_error'] and 'AICORE' in facts['npu_smi_error']


def test_a_chip_in_vm_mode_is_read_as_no_container_vnpus_with_the_reason(node, run_module, engines_path):
    # npu-smi answers info-vnpu in VM mode with a sentence and exit status 0 (its source).
    vm_mode = engines_path / 'vm-mode.txt'
    vm_mode.write_text('The vnpu is not in docker mode, does not support querying info-vnpu.\n')
    _npu_smi_with_vnpus(engines_path, os.path.join(NPU_SMI_SYNTHETIC, '310P3-duo_24.1.rc2_info.txt'),
                        str(vm_mode), os.path.join(NPU_SMI_SYNTHETIC, 'info-vnpu_910B4_26.0.rc1_none-no-header.txt'))
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info', 'vnpus': True},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert facts['npu_smi_error'] is None, facts['npu_smi_error']
    first, others = facts['npu_smi']['vnpus'][0], facts['npu_smi']['vnpus'][1:]
    assert (first['npu_id'], first['chip_id'], first['vnpus'], first['resources']) == (8, 0, [], {})
    assert 'VM mode' in first['unavailable'] and 'not in docker mode' in first['unavailable']
    assert [(chip['vnpus'], chip['unavailable']) for chip in others] == [([], None)] * 3


def test_an_info_vnpu_nobody_has_seen_names_the_node_chip_and_first_line(node, run_module, engines_path):
    odd = engines_path / 'odd.txt'
    odd.write_text('\nvNPUs are listed elsewhere now\n')
    _npu_smi_with_vnpus(engines_path, os.path.join(NPU_SMI_SYNTHETIC, '310P3-duo_24.1.rc2_info.txt'),
                        str(odd), str(odd))
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'npu_smi': 'info', 'vnpus': True},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    error = facts['npu_smi_error']
    assert 'node %s: NPU 8 chip 0' % socket.gethostname() in error
    assert 'npu-smi info -t info-vnpu -i 8 -c 0' in error and "first line: 'vNPUs are listed elsewhere now'" in error


@pytest.mark.parametrize('manager, command, rc, accepted', [
    ('apt', 'apt-cache', 0, True), ('apt', 'apt-cache', 100, False),
    ('dnf', 'dnf', 1, True), ('dnf5', 'dnf', 0, True), ('dnf', 'dnf', 2, False)])
def test_the_probe_asks_the_package_manager(node, run_module, engines_path, manager, command, rc, accepted):
    write_tool(engines_path, command, 'echo "$*" > "%s/query"\necho "dkms:"\nexit %d\n' % (engines_path, rc))
    result = run_module(ascend_facts, {'install_path': node['install_path'], 'package_manager': manager,
                                       'packages': ['linux-headers-6.1', 'dkms']}, check_mode=True, diff=False)
    if accepted:
        query = result['ansible_facts']['ascend']['package_query']
        assert (query['manager'], query['rc'], query['stdout']) == (manager, rc, 'dkms:\n')
        assert query['argv'][0] == command and query['argv'][-2:] == ['linux-headers-6.1', 'dkms']
    else:
        assert result['failed'] and 'rc=%d' % rc in result['msg'] and 'Fix:' in result['msg']


def test_a_missing_package_manager_is_a_message(node, run_module, engines_path):
    result = run_module(ascend_facts, {'install_path': node['install_path'], 'package_manager': 'dnf',
                                       'packages': ['dkms']}, check_mode=True, diff=False)
    assert result['failed'] and 'dnf is not installed' in result['msg']


def test_without_packages_nothing_is_asked(node, run_module, engines_path):
    facts = run_module(ascend_facts, {'install_path': node['install_path'], 'package_manager': 'apt'},
                       check_mode=True, diff=False)['ansible_facts']['ascend']
    assert 'package_query' not in facts


@pytest.fixture
def kernels(tmp_path, monkeypatch):
    """A /lib/modules, /boot and DKMS tree of our own; the running kernel is the test host's."""
    from ansible_collections.npu.ascend.plugins.module_utils.packages import driver_kernel_modules
    import platform
    roots = {'modules': tmp_path / 'lib-modules', 'boot': tmp_path / 'boot', 'dkms': tmp_path / 'dkms'}
    for path in roots.values():
        path.mkdir()
    monkeypatch.setattr(driver_kernel_modules, 'MODULES_ROOT', str(roots['modules']))
    monkeypatch.setattr(driver_kernel_modules, 'BOOT_DIR', str(roots['boot']))
    monkeypatch.setattr(driver_kernel_modules, 'DKMS_TREE', str(roots['dkms']))
    roots['running'] = platform.release()
    roots['next'] = roots['running'] + '.99'
    return roots


def test_the_probe_finds_prebuilt_modules_for_the_running_kernel_only(node, run_module, engines_path, kernels):
    updates = kernels['modules'] / kernels['running'] / 'updates'
    updates.mkdir(parents=True)
    (updates / 'drv_pcie_hdc_host.ko').write_text('ko')
    (kernels['boot'] / ('vmlinuz-' + kernels['next'])).write_text('image')
    (kernels['modules'] / kernels['next'] / 'kernel').mkdir(parents=True)
    facts = run_module(ascend_facts, {'install_path': node['install_path']},
                       check_mode=True, diff=False)['ansible_facts']['ascend']['kernel_modules']
    assert facts['running'] == {'release': kernels['running'], 'present': True, 'dkms': False,
                                'path': str(updates / 'drv_pcie_hdc_host.ko')}
    assert facts['next']['release'] == kernels['next'] and facts['next']['present'] is False
    # no DKMS build: no dkms command was run
    assert facts['dkms'] == {'used': False, 'module': None, 'version': None, 'kernels': [], 'status': None,
                             'entries': []}


def test_the_probe_asks_dkms_status_only_for_a_dkms_build(node, run_module, engines_path, kernels):
    import platform
    running = kernels['running']
    built = kernels['dkms'] / 'ascend_driver' / '25.0.rc1.1' / running / platform.machine() / 'module'
    built.mkdir(parents=True)
    (built / 'drv_pcie_hdc_host.ko').write_text('ko')
    installed = kernels['modules'] / running / 'updates' / 'dkms'
    installed.mkdir(parents=True)
    (installed / 'drv_pcie_hdc_host.ko.xz').write_text('ko')
    write_tool(engines_path, 'dkms', 'echo "$*" >> "%s/dkms-calls"\necho "ascend_driver/25.0.rc1.1, %s, %s: installed"\n'
               % (engines_path, running, platform.machine()))
    facts = run_module(ascend_facts, {'install_path': node['install_path']},
                       check_mode=True, diff=False)['ansible_facts']['ascend']['kernel_modules']
    assert facts['dkms']['used'] and facts['dkms']['module'] == 'ascend_driver'
    assert facts['running']['present'] and facts['running']['dkms']
    assert facts['dkms']['entries'][0]['state'] == 'installed'
    assert (engines_path / 'dkms-calls').read_text() == 'status -m ascend_driver\n'


def test_fabric_follows_the_marker_and_the_live_hccn_conf(node, run_module, monkeypatch):
    from ansible_collections.npu.ascend.plugins.module_utils.hardware import fabric_marker
    marker_path, conf_path = node['tmp'] / 'hccn-fabric.json', node['tmp'] / 'hccn.conf'
    monkeypatch.setattr(fabric_marker, 'FABRIC_MARKER_PATH', str(marker_path))
    monkeypatch.setattr(fabric_marker, 'HCCN_CONF_PATH', str(conf_path))

    def fabric():
        return run_module(ascend_facts, {'install_path': node['install_path']},
                          check_mode=True, diff=False)['ansible_facts']['ascend']['fabric']
    assert fabric()['state'] == 'absent'
    conf = b'address_0=10.20.0.10\nnetmask_0=255.255.255.0\n'
    conf_path.write_bytes(conf)
    marker_path.write_text(fabric_marker.marker_text(fabric_marker.build_marker(
        True, [{'npu': 0, 'address': '10.20.0.10', 'netmask': '255.255.255.0'}], hashlib.sha256(conf).hexdigest())))
    assert fabric()['state'] == 'passed'
    conf_path.write_bytes(conf.replace(b'10.20.0.10', b'10.20.0.11'))
    assert fabric()['state'] == 'changed'
    marker_path.write_text('{"verdict": "passed"')
    damaged = fabric()
    assert damaged['state'] == 'damaged' and str(marker_path) in damaged['reason']
