# -*- coding: utf-8 -*-
"""Issue 30, finding 4: hangs and unbounded reads.

A FIFO where a version file belongs hung ascend_facts and ascend_runfile (also in check mode), a
link to /dev/zero was read without end. Every file the modules read is now a regular file or a
clear refusal, read up to a cap, opened without blocking. Each run goes through the ``bounded``
fixture (a forked child with a deadline and a memory cap), so a regression fails instead of hanging.
"""

import os
import platform
import stat

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read

from ansible_collections.npu.ascend.plugins.module_utils.packages import install_state, reboot_marker
from ansible_collections.npu.ascend.plugins.modules import ascend_compat, ascend_facts, ascend_runfile

ARCH = platform.machine()
DRIVER_ARCH = 'x86-64' if ARCH == 'x86_64' else ARCH
DRIVER_PACKAGE = 'Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-%s.run' % DRIVER_ARCH


@pytest.fixture
def node(tmp_path, monkeypatch):
    monkeypatch.setattr(ascend_facts, 'SYSFS_PCI_DEVICES', str(tmp_path / 'no-sysfs'))
    monkeypatch.setattr(ascend_facts, 'OS_RELEASE', str(tmp_path / 'os-release'))
    monkeypatch.setattr(reboot_marker, 'REBOOT_MARKER_PATH', str(tmp_path / 'state' / 'reboot-required.json'))
    monkeypatch.setattr(install_state, 'INSTALL_RECORD_PATH', str(tmp_path / 'ascend_install.info'))
    install_path = tmp_path / 'Ascend'
    (install_path / 'driver').mkdir(parents=True)
    package = tmp_path / DRIVER_PACKAGE
    package.write_text('#!/bin/sh\necho "$@" >> "%s"\nexit 0\n' % (tmp_path / 'calls.log'))
    package.chmod(0o755)
    return {'tmp': tmp_path, 'install_path': str(install_path), 'src': str(package),
            'version_file': str(install_path / 'driver' / 'version.info'), 'calls': tmp_path / 'calls.log'}


def _fifo(path):
    os.mkfifo(str(path))
    return str(path)


def _hostile(kind, path):
    if kind == 'fifo':
        _fifo(path)
    elif kind == 'dev-zero':
        os.symlink('/dev/zero', str(path))
    else:
        # A regular file far beyond what a version file holds: refused by size, not read into memory.
        with open(str(path), 'wb') as handle:
            handle.write(b'Version=24.1.rc2\n' + b'#' * (2 * 1024 * 1024) + b'\n')
    return str(path)


CAUSES = {'fifo': 'a FIFO', 'dev-zero': 'a character device', 'huge': 'larger than'}


# ---------------------------------------------------------------- the reader itself

def test_the_reader_refuses_a_fifo_without_waiting_for_a_writer(tmp_path, bounded):
    path = _fifo(tmp_path / 'version.info')

    def read():
        try:
            bounded_read.read_bytes(path)
        except bounded_read.RefusedFile as error:
            return str(error)
    message = bounded(read)
    assert path in message and 'a FIFO' in message and 'Fix:' in message


def test_the_reader_refuses_a_link_to_dev_zero(tmp_path, bounded):
    path = str(tmp_path / 'version.info')
    os.symlink('/dev/zero', path)

    def read():
        try:
            bounded_read.read_bytes(path)
        except bounded_read.RefusedFile as error:
            return str(error)
    assert 'a character device' in bounded(read)


def test_the_reader_caps_the_size_and_reads_the_tail_of_a_log(tmp_path):
    path = tmp_path / 'big'
    path.write_bytes(b'x' * 100 + b'\nlast line\n')
    assert bounded_read.read_bytes(str(path), limit=200).endswith(b'last line\n')
    with pytest.raises(bounded_read.RefusedFile, match='larger than 50 bytes'):
        bounded_read.read_bytes(str(path), limit=50)
    assert bounded_read.read_tail(str(path), limit=10) == b'last line\n'
    with pytest.raises(OSError):
        bounded_read.read_bytes(str(tmp_path / 'missing'))


def test_the_reader_reads_proc_files_whose_size_reads_zero():
    assert bounded_read.read_bytes('/proc/self/stat').startswith(str(os.getpid()).encode())


def test_without_following_links_a_link_is_refused(tmp_path):
    (tmp_path / 'real').write_text('x')
    os.symlink('real', str(tmp_path / 'link'))
    with pytest.raises(OSError):
        bounded_read.read_bytes(str(tmp_path / 'link'), follow=False)


# ---------------------------------------------------------------- the modules

@pytest.mark.parametrize('kind', sorted(CAUSES))
@pytest.mark.parametrize('check_mode', [True, False])
def test_ascend_facts_refuses_a_version_file_it_cannot_read_safely(node, run_module, bounded, kind, check_mode):
    path = _hostile(kind, node['version_file'])
    result = bounded(lambda: run_module(ascend_facts, {'install_path': node['install_path']},
                                        check_mode=check_mode, diff=False))
    assert result['failed'] and path in result['msg'] and CAUSES[kind] in result['msg'] and 'Fix:' in result['msg']


@pytest.mark.parametrize('kind', sorted(CAUSES))
@pytest.mark.parametrize('check_mode', [True, False])
def test_ascend_runfile_refuses_a_version_file_it_cannot_read_safely(node, run_module, bounded, kind, check_mode):
    path = _hostile(kind, node['version_file'])
    result = bounded(lambda: run_module(ascend_runfile, {'src': node['src'], 'install_path': node['install_path']},
                                        check_mode=check_mode))
    assert result['failed'] and path in result['msg'] and CAUSES[kind] in result['msg'] and 'Fix:' in result['msg']
    assert not node['calls'].exists()


def test_ascend_compat_refuses_a_fifo_version_file(node, run_module, bounded):
    path = _hostile('fifo', node['version_file'])
    result = bounded(lambda: run_module(ascend_compat, {'install_path': node['install_path']},
                                        check_mode=True, diff=False))
    assert result['failed'] and path in result['msg'] and 'a FIFO' in result['msg']


def test_a_fifo_install_record_is_refused_not_waited_for(node, run_module, bounded):
    record = _fifo(node['tmp'] / 'ascend_install.info')
    result = bounded(lambda: run_module(ascend_facts, {'install_path': node['install_path']},
                                        check_mode=True, diff=False))
    assert result['failed'] and record in result['msg'] and 'a FIFO' in result['msg']


@pytest.mark.parametrize('kind', ['fifo', 'dev-zero'])
def test_a_hostile_os_release_or_reboot_marker_does_not_hang_the_probe(node, run_module, bounded, kind):
    node['tmp'].joinpath('state').mkdir()
    _hostile(kind, node['tmp'] / 'os-release')
    _hostile(kind, reboot_marker.REBOOT_MARKER_PATH)
    result = bounded(lambda: run_module(ascend_facts, {'install_path': node['install_path']},
                                        check_mode=True, diff=False))
    facts = result['ansible_facts']['ascend']
    assert facts['os'] is None and facts['reboot_pending'] is False


def test_a_fifo_in_sysfs_does_not_hang_the_probe(node, run_module, bounded, monkeypatch):
    device = node['tmp'] / 'sys' / '0000:c1:00.0'
    device.mkdir(parents=True)
    for name, value in (('vendor', '0x19e5'), ('device', '0xd802'), ('class', '0x120000'),
                        ('subsystem_vendor', '0x19e5'), ('revision', '0x20')):
        (device / name).write_text(value + '\n')
    _fifo(device / 'subsystem_device')
    monkeypatch.setattr(ascend_facts, 'SYSFS_PCI_DEVICES', str(node['tmp'] / 'sys'))
    facts = bounded(lambda: run_module(ascend_facts, {'install_path': node['install_path']},
                                       check_mode=True, diff=False))['ansible_facts']['ascend']
    assert facts['npu_count'] == 1 and facts['pci_devices'][0]['subsystem_device_id'] is None


def test_files_reports_a_fifo_as_not_a_regular_file(node, run_module, bounded):
    path = _fifo(node['tmp'] / 'config.toml')
    facts = bounded(lambda: run_module(ascend_facts, {'install_path': node['install_path'], 'files': [path]},
                                       check_mode=True, diff=False))['ansible_facts']['ascend']
    assert facts['files'] == {path: None}


def test_a_fifo_package_is_not_hashed(node, run_module, bounded):
    package = node['tmp'] / 'fifo' / DRIVER_PACKAGE
    package.parent.mkdir()
    _fifo(package)
    os.chmod(str(package), stat.S_IRWXU)
    result = bounded(lambda: run_module(ascend_runfile, {'src': str(package), 'checksum': '0' * 64,
                                                         'install_path': node['install_path']}))
    assert result['failed'] and str(package) in result['msg']
