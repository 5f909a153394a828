# -*- coding: utf-8 -*-
"""An image assembled from a component zip and a base image archive without a builder: the COPY lines
become one layer over the base's layers, ENV goes into the config, RUN lines are named, and what cannot
be replayed is refused."""
import hashlib
import io
import json
import tarfile
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils import image_assembly
from ansible_collections.npu.ascend.plugins.plugin_utils.image_assembly import AssemblyError

IMAGE = 'ascend-k8sdeviceplugin:v7.3.0'
PACKAGE = 'Ascend-mindxdl-device-plugin_7.3.0_linux-x86_64.zip'
DOCKERFILE = '''FROM ubuntu:22.04

RUN useradd -d /home/HwHiAiUser -u 1000 -m -s /usr/sbin/nologin HwHiAiUser && \\
    usermod root -s /usr/sbin/nologin

ENV LD_LIBRARY_PATH /usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/driver

COPY ./device-plugin /usr/local/bin/
COPY ./faultCode.json /usr/local/
# a comment
RUN chmod 550 /usr/local/bin/device-plugin
'''


def tar_bytes(members):
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode='w') as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return stream.getvalue()


def docker_base(arch='amd64', env=None):
    layer = tar_bytes([('bin/sh', b'#!shell\n')])
    diff_id = 'sha256:' + hashlib.sha256(layer).hexdigest()
    config = json.dumps({'architecture': arch, 'os': 'linux', 'created': '2026-01-01T00:00:00Z',
                         'config': {'Env': env or ['PATH=/usr/bin:/bin'], 'Cmd': ['/bin/sh']},
                         'rootfs': {'type': 'layers', 'diff_ids': [diff_id]}}).encode()
    manifest = json.dumps([{'Config': 'c.json', 'RepoTags': ['ubuntu:22.04'], 'Layers': ['l/layer.tar']}]).encode()
    return tar_bytes([('l/layer.tar', layer), ('c.json', config), ('manifest.json', manifest)]), layer


def oci_base(arch='amd64'):
    layer = tar_bytes([('bin/sh', b'#!shell\n')])
    digest = hashlib.sha256(layer).hexdigest()
    config = json.dumps({'architecture': arch, 'os': 'linux', 'config': {},
                         'rootfs': {'type': 'layers', 'diff_ids': ['sha256:' + digest]}}).encode()
    config_digest = hashlib.sha256(config).hexdigest()
    manifest = json.dumps({'schemaVersion': 2, 'config': {'digest': 'sha256:' + config_digest},
                           'layers': [{'digest': 'sha256:' + digest}]}).encode()
    manifest_digest = hashlib.sha256(manifest).hexdigest()
    index = json.dumps({'schemaVersion': 2, 'manifests': [{'digest': 'sha256:' + manifest_digest}]}).encode()
    return tar_bytes([('oci-layout', b'{"imageLayoutVersion":"1.0.0"}'), ('index.json', index),
                      ('blobs/sha256/' + digest, layer), ('blobs/sha256/' + config_digest, config),
                      ('blobs/sha256/' + manifest_digest, manifest)])


def zip_bytes(members, prefix=''):
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, 'w') as archive:
        for name, data, mode in members:
            info = zipfile.ZipInfo(prefix + name)
            info.external_attr = (0o100000 | mode) << 16
            archive.writestr(info, data)
    return stream.getvalue()


def package(dockerfile=DOCKERFILE, prefix=''):
    return zip_bytes([('device-plugin', b'\x7fELF plugin', 0o500), ('Dockerfile', dockerfile.encode(), 0o400),
                      ('faultCode.json', b'{}', 0o400), ('device-plugin-910-v7.3.0.yaml', b'kind: DaemonSet', 0o400)],
                     prefix)


def assemble(package_data, base_data, arch='x86_64'):
    zip_file = image_assembly.open_package(io.BytesIO(package_data))
    base = image_assembly.open_base(io.BytesIO(base_data))
    plan = image_assembly.plan_archive(zip_file, base, IMAGE, arch, PACKAGE)
    out = io.BytesIO()
    image_assembly.write_archive(plan, base, out)
    return plan, out.getvalue()


def read_archive(data):
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        manifest = json.loads(archive.extractfile('manifest.json').read())[0]
        config = json.loads(archive.extractfile(manifest['Config']).read())
        layers = [archive.extractfile(name).read() for name in manifest['Layers']]
    return manifest, config, layers


def test_copy_lines_become_one_layer_on_the_base_layers():
    base, base_layer = docker_base()
    plan, data = assemble(package(), base)
    manifest, config, layers = read_archive(data)
    assert manifest['RepoTags'] == [IMAGE]
    assert layers[0] == base_layer
    with tarfile.open(fileobj=io.BytesIO(layers[1])) as layer:
        members = {member.name: member for member in layer.getmembers()}
        assert layer.extractfile('usr/local/bin/device-plugin').read() == b'\x7fELF plugin'
    assert members['usr/local/bin/device-plugin'].mode == 0o500
    assert members['usr/local/faultCode.json'].mode == 0o400
    assert members['usr/local/bin'].isdir() and members['usr'].mode == 0o755
    # The manifests stay out: only what the Dockerfile copies is in the image.
    assert plan['files'] == ['/usr/local/bin/device-plugin', '/usr/local/faultCode.json']
    diff_ids = config['rootfs']['diff_ids']
    assert diff_ids == ['sha256:' + hashlib.sha256(layers[0]).hexdigest(), 'sha256:' + hashlib.sha256(layers[1]).hexdigest()]
    assert config['architecture'] == 'amd64' and 'created' not in config
    assert 'LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/driver' in config['config']['Env']
    assert 'PATH=/usr/bin:/bin' in config['config']['Env'] and config['config']['Cmd'] == ['/bin/sh']
    assert [line.split()[0] for line in plan['skipped']] == ['RUN', 'RUN']
    assert plan['from'] == 'ubuntu:22.04'


def test_the_same_inputs_give_the_same_bytes_and_the_manifest_says_so():
    base, _layer = docker_base()
    first_plan, first = assemble(package(), base)
    second_plan, second = assemble(package(), base)
    assert first == second
    assert image_assembly.archive_manifest(io.BytesIO(first)) == first_plan['manifest'] == second_plan['manifest']
    changed = package(DOCKERFILE.replace('faultCode.json /usr/local/', 'faultCode.json /etc/'))
    assert assemble(changed, base)[0]['manifest'] != first_plan['manifest']


def test_an_oci_layout_base_and_a_zip_with_one_top_directory():
    plan, data = assemble(package(prefix='Ascend-mindxdl-device-plugin_7.3.0_linux-x86_64/'), oci_base())
    manifest, config, layers = read_archive(data)
    assert len(layers) == 2 and manifest['RepoTags'] == [IMAGE]
    assert plan['files'][0] == '/usr/local/bin/device-plugin'


def test_env_replaces_a_key_of_the_base():
    base, _layer = docker_base(env=['PATH=/usr/bin', 'LD_LIBRARY_PATH=/old'])
    _plan, data = assemble(package(), base)
    env = read_archive(data)[1]['config']['Env']
    assert [item for item in env if item.startswith('LD_LIBRARY_PATH=')] == [
        'LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/driver']


@pytest.mark.parametrize('base_arch, arch', [('arm64', 'x86_64'), ('amd64', 'aarch64')])
def test_a_base_of_another_architecture_is_refused(base_arch, arch):
    with pytest.raises(AssemblyError, match='the base image is for %s, the package for %s' % (base_arch, arch)):
        assemble(package(), docker_base(base_arch)[0], arch)


@pytest.mark.parametrize('dockerfile, cause', [
    ('FROM ubuntu:22.04\nADD ./device-plugin.tar.gz /usr/local/bin/\n', 'ADDs'),
    ('FROM golang AS build\nFROM ubuntu:22.04\nCOPY --from=build /x /x\n', 'second FROM'),
    ('FROM ubuntu:22.04\nCOPY --from=build /x /x\n', 'COPY --from'),
    ('FROM ubuntu:22.04\nCOPY ./npu-exporter /usr/local/bin/\n', 'does not hold'),
    ('FROM ubuntu:22.04\nRUN true\n', 'copies nothing'),
    ('COPY ./device-plugin /usr/local/bin/\n', 'before its FROM'),
    ('FROM ubuntu:22.04\nCOPY ../../etc/shadow /x\n', 'leaves the package'),
    ('FROM ubuntu:22.04\nFETCH x\n', 'not Dockerfile syntax'),
])
def test_what_needs_a_builder_or_is_missing_is_refused(dockerfile, cause):
    with pytest.raises(AssemblyError, match=cause):
        assemble(package(dockerfile), docker_base()[0])


def test_a_file_whose_name_starts_with_two_dots_is_the_package_s_own():
    # Hypothesis found '..0' refused as leaving the package: only a '..' part leaves it.
    data = zip_bytes([('Dockerfile', b'FROM ubuntu:22.04\nCOPY ./..0 /opt/\n', 0o400), ('..0', b'x', 0o640)])
    plan, _out = assemble(data, docker_base()[0])
    assert plan['files'] == ['/opt/..0']


def test_a_zip_without_a_dockerfile_names_what_it_holds():
    data = zip_bytes([('device-plugin', b'x', 0o500)])
    with pytest.raises(AssemblyError, match='holds no Dockerfile .it holds: device-plugin'):
        assemble(data, docker_base()[0])


@pytest.mark.parametrize('base, cause', [
    (tar_bytes([('hello', b'x')]), 'neither'),
    (tar_bytes([('manifest.json', b'[]')]), 'holds 0 images'),
    (tar_bytes([('manifest.json', b'[{"Config": "c.json", "Layers": []}]'), ('c.json', b'{"rootfs": {"diff_ids": ["sha256:ab"]}}')]),
     'lists 1 layers and its manifest 0'),
    (tar_bytes([('manifest.json', b'[{"Config": "c.json", "Layers": ["l.tar"]}]'), ('c.json', b'{"rootfs": {"diff_ids": ["sha256:ab"]}}')]),
     'lacks its layer l.tar'),
    (tar_bytes([('manifest.json', b'{not json')]), 'cannot be read'),
])
def test_a_base_that_is_not_one_image_is_refused(base, cause):
    with pytest.raises(AssemblyError, match=cause):
        assemble(package(), base)


def test_files_that_are_not_archives_are_refused():
    with pytest.raises(AssemblyError, match='not a zip file'):
        image_assembly.open_package(io.BytesIO(b'not a zip'))
    with pytest.raises(AssemblyError, match='not a tar file'):
        image_assembly.open_base(io.BytesIO(b'\x00' * 10))
    assert image_assembly.archive_manifest(io.BytesIO(b'garbage')) is None


def test_copy_chmod_a_directory_and_a_relative_destination():
    dockerfile = 'FROM ubuntu:22.04\nWORKDIR /opt\nCOPY --chmod=0755 --chown=1000:1000 ["conf", "etc/"]\nCMD ["/x"]\n'
    data = zip_bytes([('Dockerfile', dockerfile.encode(), 0o400), ('conf/a.json', b'a', 0o400), ('conf/sub/b', b'b', 0)])
    plan, out = assemble(data, docker_base()[0])
    assert plan['files'] == ['/opt/etc/a.json', '/opt/etc/sub/b']
    _manifest, config, layers = read_archive(out)
    assert config['config']['WorkingDir'] == '/opt' and config['config']['Cmd'] == ['/x']
    with tarfile.open(fileobj=io.BytesIO(layers[1])) as layer:
        assert layer.getmember('opt/etc/sub/b').mode == 0o755


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=('Cs',)), max_size=300))
def test_any_dockerfile_text_is_parsed_or_refused_with_a_message(text):
    try:
        spec = image_assembly.parse_dockerfile(text)
    except AssemblyError as error:
        assert str(error)
        return
    assert isinstance(spec['base'], str)


NAMES = st.text(alphabet='abcdefghijklmnopqrstuvwxyz0123456789._-', min_size=1, max_size=12).filter(
    lambda name: name not in ('.', '..') and name != 'Dockerfile')


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(NAMES, st.binary(max_size=64), min_size=1, max_size=6),
       st.sampled_from(['/usr/local/bin/', '/opt/x/', '/']))
def test_every_copied_file_lands_in_the_layer_byte_for_byte(files, dest):
    dockerfile = 'FROM ubuntu:22.04\n' + ''.join('COPY ./%s %s\n' % (name, dest) for name in sorted(files))
    data = zip_bytes([('Dockerfile', dockerfile.encode(), 0o400)] + [(name, body, 0o640) for name, body in files.items()])
    plan, out = assemble(data, docker_base()[0])
    assert sorted(plan['files']) == sorted((dest + name) for name in files)
    with tarfile.open(fileobj=io.BytesIO(read_archive(out)[2][-1])) as layer:
        for name, body in files.items():
            member = layer.getmember((dest + name).lstrip('/'))
            assert layer.extractfile(member).read() == body and member.mode == 0o640
