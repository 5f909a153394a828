# -*- coding: utf-8 -*-
"""Issue 30, finding 5: tracebacks, most of them after a successful install.

An installer log with GBK bytes, a ``LogFile:`` naming a FIFO, /dev/zero or a binary, and a reboot
marker that is not UTF-8 or holds ``"reasons": 5`` / ``"reasons": "abc"`` crashed ascend_runfile
after the installer had succeeded: the result (and its reboot_required) was lost, and a rerun said
keep. A non-UTF-8 /etc/os-release crashed ascend_facts; template_config naming a directory and a
backup name now taken by a directory crashed the containerd module. Each is now a result or a
message, and a successful install is recorded as such.
"""

import json
import os
import platform
import shutil

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.packages import install_state, reboot_marker
from ansible_collections.npu.ascend.plugins.modules import ascend_facts, ascend_runfile

ARCH = platform.machine()
DRIVER_ARCH = 'x86-64' if ARCH == 'x86_64' else ARCH
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'fixtures')

# A driver installer that succeeds, asks for a reboot and names its log (LOG_PATH) in its output.
INSTALLER = r'''#!/bin/bash
echo "$@" >> "$(dirname "$0")/calls.log"
case " $* " in *" --check "*) echo "All good."; exit 0;; esac
path=/usr/local/Ascend
for arg in "$@"; do case "$arg" in --install-path=*) path="${arg#--install-path=}";; esac; done
mkdir -p "$path/driver"
printf 'Version=@VERSION@\n' > "$path/driver/version.info"
echo "[Driver] [2025-01-01 10:00:00] [INFO]LogFile: @LOG@"
echo "[Driver] [2025-01-01 10:00:01] [INFO]Driver package installed successfully! Reboot needed for installation/upgrade to take effect!"
exit 0
'''


@pytest.fixture
def node(tmp_path, monkeypatch):
    monkeypatch.setattr(reboot_marker, 'REBOOT_MARKER_PATH', str(tmp_path / 'state' / 'reboot-required.json'))
    monkeypatch.setattr(install_state, 'INSTALL_RECORD_PATH', str(tmp_path / 'ascend_install.info'))
    monkeypatch.setattr(ascend_facts, 'SYSFS_PCI_DEVICES', str(tmp_path / 'no-sysfs'))
    monkeypatch.setattr(ascend_facts, 'OS_RELEASE', str(tmp_path / 'os-release'))
    install_path = tmp_path / 'Ascend'

    def driver(log, version='25.0.rc1.1'):
        path = tmp_path / ('Ascend-hdk-910b-npu-driver_%s_linux-%s.run' % (version, DRIVER_ARCH))
        path.write_text(INSTALLER.replace('@VERSION@', version).replace('@LOG@', str(log)))
        path.chmod(0o755)
        return str(path)
    return {'tmp': tmp_path, 'install_path': str(install_path), 'driver': driver}


@pytest.fixture
def warnings(monkeypatch):
    recorded = []
    for module in (ascend_runfile, ascend_facts):
        monkeypatch.setattr(module.AnsibleModule, 'warn', lambda module, text, **kwargs: recorded.append(text))
    return recorded


def _install_then_probe(node, run_module, bounded, log):
    """Install the driver, then probe the node: (the install's result, the probe's facts)."""
    src = node['driver'](log)

    def run():
        installed = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
        facts = run_module(ascend_facts, {'install_path': node['install_path']}, check_mode=True, diff=False)
        again = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
        return installed, facts['ansible_facts']['ascend'], again
    return bounded(run)


def _assert_recorded(installed, facts, again):
    """The install succeeded and says so; its reboot request reached the marker the probe reads."""
    assert not installed['failed'] and installed['changed'] and installed['reboot_required']
    assert installed['version_after'] == '25.0.rc1.1'
    assert facts['reboot_pending'] is True
    assert [reason['component'] for reason in facts['reboot_reasons']] == ['driver']
    assert again['action'] == 'keep' and not again['changed']


# ---------------------------------------------------------------- the installer's log

def test_an_installer_log_with_gbk_bytes_is_shown_escaped(node, run_module, bounded):
    log = node['tmp'] / 'install.log'
    log.write_bytes(u'[INFO] 驱动安装成功\nlast line\n'.encode('gbk'))
    installed, facts, again = _install_then_probe(node, run_module, bounded, log)
    _assert_recorded(installed, facts, again)
    assert installed['log_tail'][-1] == 'last line' and '\\x' in installed['log_tail'][0]


@pytest.mark.parametrize('kind', ['fifo', 'dev-zero', 'binary', 'huge'])
def test_a_log_file_that_is_not_a_readable_log_does_not_lose_the_install(node, run_module, bounded, kind):
    log = node['tmp'] / 'install.log'
    if kind == 'fifo':
        os.mkfifo(str(log))
    elif kind == 'dev-zero':
        os.symlink('/dev/zero', str(log))
    elif kind == 'binary':
        log.write_bytes(bytes(range(256)) * 64)
    else:
        log.write_bytes(b'x' * (8 * 1024 * 1024) + b'\nthe end\n')
    installed, facts, again = _install_then_probe(node, run_module, bounded, log)
    _assert_recorded(installed, facts, again)
    if kind == 'huge':
        assert installed['log_tail'][-1] == 'the end'
    if kind in ('fifo', 'dev-zero'):
        assert installed['log_tail'] == []


# ---------------------------------------------------------------- the reboot marker

def _of_this_boot(content):
    """A damaged JSON object marker tagged with the running boot, so that its reasons are read."""
    if not content.startswith(b'{'):
        return content
    damaged = json.loads(content.decode())
    damaged.update(reboot_marker.read_current_boot())
    return json.dumps(damaged).encode()


@pytest.mark.parametrize('content', [
    b'\xff\xfe{"reasons": []}',
    b'{"reasons": 5}',
    b'{"reasons": "abc"}',
    b'{"reasons": [1, "two"]}',
    b'[1, 2, 3]',
    b'[' * 100000,
])
def test_a_damaged_reboot_marker_is_replaced_by_the_reboot_this_install_asked_for(node, run_module, bounded, content):
    marker = node['tmp'] / 'state' / 'reboot-required.json'
    marker.parent.mkdir()
    marker.write_bytes(_of_this_boot(content))
    installed, facts, again = _install_then_probe(node, run_module, bounded, node['tmp'] / 'no-log')
    _assert_recorded(installed, facts, again)
    assert [reason['component'] for reason in json.loads(marker.read_text())['reasons']] == ['driver']


@pytest.mark.parametrize('content', [b'\xff\xfe', b'{"reasons": 5}', b'{"reasons": "abc"}'])
def test_the_probe_reads_a_damaged_marker_of_this_boot_as_pending_nothing(node, run_module, warnings, content):
    marker = node['tmp'] / 'state' / 'reboot-required.json'
    marker.parent.mkdir()
    marker.write_bytes(_of_this_boot(content))
    facts = run_module(ascend_facts, {'install_path': node['install_path']}, check_mode=True,
                       diff=False)['ansible_facts']['ascend']
    assert facts['reboot_pending'] is False and facts['reboot_reasons'] == []
    assert any(str(marker) in text and 'Fix:' in text for text in warnings)


def test_a_marker_that_cannot_be_written_still_reports_the_reboot(node, run_module, bounded, warnings):
    # The marker's name taken by a directory: the install still reports reboot_required, and warns.
    os.makedirs(reboot_marker.REBOOT_MARKER_PATH)
    src = node['driver'](node['tmp'] / 'no-log')
    installed = bounded(lambda: run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']}))
    assert not installed['failed'] and installed['reboot_required']


def test_the_marker_functions_refuse_the_shapes_no_run_writes():
    boot = {'boot_id': 'a', 'pid1_start_time': '1'}
    for reasons in (5, 'abc', [1, 'two'], None):
        damaged = dict(boot, reasons=reasons)
        assert reboot_marker.parse_reboot_marker(json.dumps(damaged)) is None
        assert reboot_marker.reboot_pending(damaged, boot) == (False, [])
        updated = reboot_marker.add_reboot_reason(damaged, boot, 'driver', '25.0.rc1.1', 'now')
        assert [reason['component'] for reason in updated['reasons']] == ['driver']


# ---------------------------------------------------------------- os-release

def test_a_non_utf8_os_release_is_an_unknown_os_not_a_traceback(node, run_module, warnings):
    (node['tmp'] / 'os-release').write_bytes(b'NAME="openEuler\xff"\nVERSION_ID="24.03"\n')
    result = run_module(ascend_facts, {'install_path': node['install_path']}, check_mode=True, diff=False)
    assert result['ansible_facts']['ascend']['os'] is None
    assert any('os-release' in text and 'Fix:' in text for text in warnings)


# ---------------------------------------------------------------- containerd_runtime

def test_template_config_naming_a_directory_is_a_message(tmp_path, run_module):
    pytest.importorskip('tomlkit')
    from ansible_collections.npu.ascend.plugins.modules import containerd_runtime
    template = tmp_path / 'template'
    template.mkdir()
    for check_mode in (True, False):
        result = run_module(containerd_runtime, {'path': str(tmp_path / 'conf.d' / 'ascend.toml'),
                                                 'template_config': str(template)}, check_mode=check_mode)
        assert result['failed'] and str(template) in result['msg'] and 'directory' in result['msg']
    assert not (tmp_path / 'conf.d').exists()


def test_a_backup_name_now_taken_by_a_directory_is_kept_with_a_warning(tmp_path, run_module, warnings, monkeypatch):
    pytest.importorskip('tomlkit')
    from ansible_collections.npu.ascend.plugins.modules import containerd_runtime
    recorded = warnings
    monkeypatch.setattr(containerd_runtime.AnsibleModule, 'warn', lambda module, text, **kwargs: recorded.append(text))
    config = tmp_path / 'config.toml'
    shutil.copy(os.path.join(FIXTURES, 'containerd', 'cloud-image-gpu-v2.toml'), str(config))
    original = config.read_text()
    added = run_module(containerd_runtime, {'path': str(config), 'backup': True})
    os.unlink(added['backup_file'])
    os.mkdir(added['backup_file'])
    for check_mode in (True, False):
        removed = run_module(containerd_runtime, {'path': str(config), 'state': 'absent', 'remove_backups': True},
                             check_mode=check_mode)
        assert not removed.get('failed') and removed['changed']
        assert removed['removed_backups'] == [] and removed['kept_backups'] == [added['backup_file']]
    assert config.read_text() == original and os.path.isdir(added['backup_file'])
    assert any(added['backup_file'] in text and 'not a regular file' in text for text in recorded)
