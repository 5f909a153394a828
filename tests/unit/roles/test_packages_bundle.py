# -*- coding: utf-8 -*-
"""npu.ascend.bundle: which package files an inventory needs, judged on the controller, no node reached.

Three nodes as an operator declares them (a 910B x86_64 server, a 310P aarch64 one and an Atlas
A3 x86_64 one on CANN 8.5.0, their addresses unreachable on purpose) against a complete, an incomplete and a tampered package
directory; the file names are the ones Huawei publishes, spelled out here rather than derived.
"""
import hashlib

import pytest

from conftest import run_playbook

NEEDED = {
    'a2-01': ['Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run',
              'Ascend-hdk-910b-npu-firmware_7.7.0.1.231.run',
              'Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run',
              'Ascend-cann-kernels-910b_8.2.RC1_linux-x86_64.run',
              'Ascend-docker-runtime_7.3.0_linux-x86_64.run'],
    'duo-01': ['Ascend-hdk-310p-npu-driver_25.0.rc1.1_linux-aarch64.run',
               'Ascend-hdk-310p-npu-firmware_7.7.0.1.231.run',
               'Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run',
               'Ascend-cann-kernels-310p_8.2.RC1_linux-aarch64.run',
               'Ascend-docker-runtime_7.3.0_linux-aarch64.run'],
    # An Atlas A3 on CANN 8.5.0: its own HDK prefix and the A3 ops package (Huawei's OBS and CANN 8.5.0 guide).
    'a3-01': ['Atlas-A3-hdk-npu-driver_25.3.rc1_linux-x86-64.run',
              'Atlas-A3-hdk-npu-firmware_7.8.0.2.212.run',
              'Ascend-cann-toolkit_8.5.0_linux-x86_64.run',
              'Ascend-cann-A3-ops_8.5.0_linux-x86_64.run',
              'Ascend-docker-runtime_7.3.0_linux-x86_64.run'],
}
INVENTORY = '''
all:
  children:
    npu_nodes:
      vars:
        hdk_driver_version: 25.0.rc1.1
        hdk_firmware_version: 7.7.0.1.231
        cann_version: 8.2.RC1
        cann_kernels: true
        cann_nnal: false
        container_runtime_version: 7.3.0
        packages_source_dir: {packages}
      hosts:
        a2-01: {{ansible_host: 192.0.2.11, npu_ascend_chip: 910b, npu_ascend_arch: x86_64}}
        duo-01: {{ansible_host: 192.0.2.21, npu_ascend_chip: 310p, npu_ascend_arch: aarch64}}
        a3-01: {{ansible_host: 192.0.2.31, npu_ascend_chip: A3, npu_ascend_arch: x86_64, hdk_driver_version: 25.3.rc1,
                hdk_firmware_version: 7.8.0.2.212, cann_version: 8.5.0}}
'''


@pytest.fixture
def packages(tmp_path):
    directory = tmp_path / 'packages'
    directory.mkdir()
    sums = []
    for name in sorted(set(sum(NEEDED.values(), []))):
        (directory / name).write_bytes(b'#!/bin/sh\n# ' + name.encode() + b'\n')
        sums.append('%s  %s' % (hashlib.sha256((directory / name).read_bytes()).hexdigest(), name))
    (directory / 'SHA256SUMS').write_text('\n'.join(sums) + '\n')
    return directory


def run_bundle(tmp_path, packages):
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text(INVENTORY.format(packages=packages))
    listing = tmp_path / 'needed.txt'
    rc, out = run_playbook(['-i', str(inventory), 'npu.ascend.bundle', '-e', 'packages_bundle_list_file=%s' % listing])
    return rc, out, listing


def test_a_complete_directory_passes_and_lists_each_file_once(tmp_path, packages):
    rc, out, listing = run_bundle(tmp_path, packages)
    assert rc == 0, out
    assert listing.read_text().split() == sorted(set(sum(NEEDED.values(), [])))
    for host, names in NEEDED.items():
        for name in names:
            assert 'OK %s' % name in out and 'for %s)' % host in out
    assert 'FAIL' not in out


def test_an_incomplete_directory_names_the_missing_file_and_its_host(tmp_path, packages):
    missing = NEEDED['duo-01'][0]
    (packages / missing).unlink()
    rc, out, _listing = run_bundle(tmp_path, packages)
    assert rc != 0, out
    assert 'FAIL %s (driver 25.0.rc1.1, for duo-01): not found in %s' % (missing, packages) in out
    assert 'duo-01: driver package %s: not found in %s. Fix: download %s from Huawei' % (missing, packages, missing) in out
    # The other node's packages are all there: it passes, and the summary names the one that stopped.
    assert 'a2-01 : ok=' in out and 'failed=0' in out.split('a2-01 : ok=')[1][:80]
    assert 'duo-01' in out.split('PLAY RECAP', maxsplit=1)[0].split('Summarise how the run ended')[-1]


def test_a_tampered_file_is_refused_with_both_checksums(tmp_path, packages):
    tampered = NEEDED['a2-01'][2]
    expected = hashlib.sha256((packages / tampered).read_bytes()).hexdigest()
    (packages / tampered).write_bytes(b'#!/bin/sh\nrm -rf /\n')
    rc, out, _listing = run_bundle(tmp_path, packages)
    assert rc != 0, out
    actual = hashlib.sha256(b'#!/bin/sh\nrm -rf /\n').hexdigest()
    assert 'sha256 mismatch: expected %s, the file has %s' % (expected, actual) in out
    assert 'FAIL %s (toolkit 8.2.RC1, for a2-01)' % tampered in out


def test_a_node_without_a_declared_chip_is_named_with_the_fix(tmp_path, packages):
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text(INVENTORY.replace('npu_ascend_chip: 310p, ', '').format(packages=packages))
    rc, out = run_playbook(['-i', str(inventory), 'npu.ascend.bundle'])
    assert rc != 0, out
    assert "duo-01: the packages cannot be named without the node's chip family. Fix: set npu_ascend_chip" in out
    # The other node goes on: its files are listed and judged.
    assert 'OK %s (driver 25.0.rc1.1' % NEEDED['a2-01'][0] in out and 'a2-01 : ok=' in out
    assert 'failed=0' in out.split('a2-01 : ok=')[1][:80]


def test_with_images_the_image_files_get_a_download_list_of_their_own(tmp_path, packages):
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text(INVENTORY.format(packages=packages))
    images_listing = tmp_path / 'needed-images.txt'
    rc, out = run_playbook(['-i', str(inventory), 'npu.ascend.bundle', '-e', 'images_deliver=true',
                            '-e', 'images_from_packages=true', '-e', 'images_base_archive=ubuntu_22.04_linux-x86_64.tar',
                            '-e', 'images_bundle_list_file=%s' % images_listing])
    # Huawei's component zips (MindCluster) of both architectures and the base image they are assembled
    # on are not in the directory: every node stops on them, and the list names exactly the files to fetch.
    assert rc != 0, out
    assert 'FAIL Ascend-mindxdl-device-plugin_7.3.0_linux-aarch64.zip' in out
    assert images_listing.read_text().split() == [
        'Ascend-mindxdl-device-plugin_7.3.0_linux-aarch64.zip', 'Ascend-mindxdl-device-plugin_7.3.0_linux-x86_64.zip',
        'Ascend-mindxdl-npu-exporter_7.3.0_linux-aarch64.zip', 'Ascend-mindxdl-npu-exporter_7.3.0_linux-x86_64.zip',
        'ubuntu_22.04_linux-x86_64.tar']


def test_an_image_without_its_base_archive_is_a_problem_not_a_file_to_fetch(tmp_path, packages):
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text(INVENTORY.format(packages=packages))
    images_listing = tmp_path / 'needed-images.txt'
    rc, out = run_playbook(['-i', str(inventory), 'npu.ascend.bundle', '-e', 'images_deliver=true',
                            '-e', 'images_from_packages=true', '-e', 'images_bundle_list_file=%s' % images_listing])
    assert rc != 0 and 'no base image archive is named' in out, out
    assert images_listing.read_text().split() == []
