# -*- coding: utf-8 -*-
"""ascend_runfile holds the node lock around its installers and writes the reboot marker under a unique name."""

import os
import platform
import stat

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.packages import reboot_marker
from ansible_collections.npu.ascend.plugins.modules import ascend_runfile

DRIVER_ARCH = 'x86-64' if platform.machine() == 'x86_64' else platform.machine()

# Just enough of the driver installer: --check, an install writing version.info, the reboot line.
INSTALLER = r'''#!/bin/bash
echo "$@" >> "$(dirname "$0")/calls.log"
path=/usr/local/Ascend
for arg in "$@"; do case "$arg" in --install-path=*) path="${arg#--install-path=}";; esac; done
case " $* " in *" --check "*) echo "SHA256 checksums are OK. All good."; exit 0;; esac
mkdir -p "$path/driver"
printf 'Version=25.0.rc1.1\n' > "$path/driver/version.info"
echo "[Driver] [INFO]Driver package installed successfully! Reboot needed for installation/upgrade to take effect!"
exit 2
'''


@pytest.fixture
def driver(tmp_path, monkeypatch):
    marker = tmp_path / 'state' / 'reboot-required.json'
    monkeypatch.setattr(reboot_marker, 'REBOOT_MARKER_PATH', str(marker))
    src = tmp_path / ('Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-%s.run' % DRIVER_ARCH)
    src.write_text(INSTALLER)
    src.chmod(src.stat().st_mode | stat.S_IXUSR)
    return {'src': str(src), 'install_path': str(tmp_path / 'Ascend'), 'marker': marker, 'calls': tmp_path / 'calls.log'}


def test_installer_waits_for_the_node_lock_and_names_its_holder(driver, run_module, node_lock_in_tmp,
                                                                held_by_another_process):
    args = {'src': driver['src'], 'install_path': driver['install_path'], 'lock_timeout': 0}
    with held_by_another_process(node_lock_in_tmp, {'module': 'npu.ascend.docker_runtime',
                                                    'target': '/etc/docker/daemon.json'}) as pid:
        refused = run_module(ascend_runfile, args)
    assert refused['failed'] and 'pid %d' % pid in refused['msg'] and 'npu.ascend.docker_runtime' in refused['msg']
    assert not driver['calls'].exists()
    assert not os.path.exists(os.path.join(driver['install_path'], 'driver'))
    installed = run_module(ascend_runfile, args)
    assert installed['changed'] and installed['version_after'] == '25.0.rc1.1'


def test_reboot_marker_is_written_under_a_unique_temporary_name(driver, run_module):
    state = driver['marker'].parent
    state.mkdir()
    # What another writer's temporary file would be under the old fixed name: left alone.
    other = state / 'reboot-required.json.tmp'
    other.write_text('another writer')
    result = run_module(ascend_runfile, {'src': driver['src'], 'install_path': driver['install_path']})
    assert result['reboot_required']
    assert '"driver"' in driver['marker'].read_text()
    assert other.read_text() == 'another writer'
    assert sorted(os.listdir(str(state))) == ['reboot-required.json', 'reboot-required.json.tmp']
    assert oct(driver['marker'].stat().st_mode & 0o777) == oct(0o644)


def test_a_package_installed_by_the_lock_holder_meanwhile_is_not_installed_again(driver, run_module, monkeypatch):
    """Two runs plan the same install; the second gets the lock once the first has installed it."""
    acquire = ascend_runfile.node_lock.NodeLock.acquire

    def acquire_after_the_other_run(self):
        # What the run that held the lock leaves behind: the driver at the package's version.
        version_dir = os.path.join(driver['install_path'], 'driver')
        os.makedirs(version_dir)
        with open(os.path.join(version_dir, 'version.info'), 'w') as handle:
            handle.write('Version=25.0.rc1.1\n')
        return acquire(self)

    monkeypatch.setattr(ascend_runfile.node_lock.NodeLock, 'acquire', acquire_after_the_other_run)
    result = run_module(ascend_runfile, {'src': driver['src'], 'install_path': driver['install_path']})
    assert not result['changed'] and result['action'] == 'keep', result
    assert 'another run changed it meanwhile' in result['reason']
    assert not driver['calls'].exists()
