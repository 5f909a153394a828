# -*- coding: utf-8 -*-
"""fleet.py image-archive: what an operator's `docker save` of a one-binary image would be, in the
sandbox's package source with its sha256 in SHA256SUMS (molecule/kubelet loads it with the images role)."""

import hashlib
import importlib.util
import io
import json
import os
import tarfile

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope='module')
def fleet():
    spec = importlib.util.spec_from_file_location('npu_ascend_sandbox_fleet_archive', os.path.join(REPO_ROOT, 'sandbox', 'fleet.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_archive_is_a_docker_save_of_the_named_image(fleet, tmp_path):
    binary = tmp_path / 'device-plugin'
    binary.write_bytes(b'\x7fELF stand-in')
    data = fleet.image_archive_bytes(str(binary), 'ascend-k8sdeviceplugin:v7.3.0', 'x86_64', '/usr/local/bin/device-plugin')
    assert data == fleet.image_archive_bytes(str(binary), 'ascend-k8sdeviceplugin:v7.3.0', 'x86_64',
                                             '/usr/local/bin/device-plugin')
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        (manifest,) = json.load(archive.extractfile('manifest.json'))
        assert manifest['RepoTags'] == ['ascend-k8sdeviceplugin:v7.3.0']
        config = json.load(archive.extractfile(manifest['Config']))
        layer = archive.extractfile(manifest['Layers'][0]).read()
    assert config['architecture'] == 'amd64' and config['config']['Entrypoint'] == ['/usr/local/bin/device-plugin']
    assert config['rootfs']['diff_ids'] == ['sha256:' + hashlib.sha256(layer).hexdigest()]
    with tarfile.open(fileobj=io.BytesIO(layer)) as rootfs:
        member = rootfs.getmember('usr/local/bin/device-plugin')
        assert member.mode == 0o755 and rootfs.extractfile(member).read() == b'\x7fELF stand-in'


def test_the_archive_lands_beside_the_packages_with_its_sha256(fleet, tmp_path):
    binary = tmp_path / 'device-plugin'
    binary.write_bytes(b'stand-in')
    (tmp_path / 'out').mkdir()
    (tmp_path / 'out' / 'Ascend-docker-runtime_7.3.0_linux-x86_64.run').write_bytes(b'run')
    fleet.STATE_ROOT = tmp_path / 'state'
    target = fleet.build_image_archive(str(binary), 'ascend-k8sdeviceplugin:v7.3.0', 'x86_64',
                                       '/usr/local/bin/device-plugin', out_dir=tmp_path / 'out')
    assert target.name == 'ascend-k8sdeviceplugin_v7.3.0_linux-x86_64.tar'
    sums = (tmp_path / 'out' / 'SHA256SUMS').read_text().splitlines()
    assert '%s  %s' % (hashlib.sha256(target.read_bytes()).hexdigest(), target.name) in sums
    assert any(line.endswith('Ascend-docker-runtime_7.3.0_linux-x86_64.run') for line in sums)
    with pytest.raises(fleet.SandboxError, match='has no tag'):
        fleet.build_image_archive(str(binary), 'ascend-k8sdeviceplugin', 'x86_64', '/x', out_dir=tmp_path / 'out')


def test_component_zip_holds_the_binary_a_dockerfile_and_the_manifests(fleet, tmp_path):
    """fleet.py component-zip: Huawei's layout (docs/huawei-sources.md), flat, byte for byte the same for the
    same input, with its sha256 in SHA256SUMS beside the .run packages."""
    import zipfile
    binary = tmp_path / 'device-plugin'
    binary.write_bytes(b'\x7fELF stand-in')
    target = fleet.build_component_zip('device-plugin', '7.3.0', 'x86_64', str(binary), out_dir=tmp_path / 'out')
    assert target.name == 'Ascend-mindxdl-device-plugin_7.3.0_linux-x86_64.zip'
    first = target.read_bytes()
    fleet.build_component_zip('device-plugin', '7.3.0', 'x86_64', str(binary), out_dir=tmp_path / 'out')
    assert target.read_bytes() == first
    with zipfile.ZipFile(str(target)) as archive:
        names = archive.namelist()
        assert archive.read('device-plugin') == b'\x7fELF stand-in'
        assert (archive.getinfo('device-plugin').external_attr >> 16) & 0o777 == 0o500
        dockerfile = archive.read('Dockerfile').decode()
    assert 'device-plugin-910-v7.3.0.yaml' in names and 'faultCode.json' in names
    assert dockerfile.startswith('FROM ubuntu:22.04\n') and 'COPY ./device-plugin /usr/local/bin/' in dockerfile
    sums = (tmp_path / 'out' / 'SHA256SUMS').read_text()
    assert '%s  %s' % (hashlib.sha256(first).hexdigest(), target.name) in sums
