# -*- coding: utf-8 -*-
"""roles/images' registry mode against a real registry: the CNCF distribution registry (built by
tests/k8s/build.sh from its Go module) on 127.0.0.1, over TLS with a certificate from a private CA.

An image assembled from a component zip the way the role does it (image_assembly) is pushed with
registry_push, the code behind npu.ascend.image_push; the registry's own answers are then read back
(manifest by tag, every blob by digest) and compared with the archive. Nothing here is mocked: the
HTTP requests counted are the ones the registry answered.
"""

import contextlib
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import warnings
import zipfile
from pathlib import Path
from unittest import mock

import pytest

import registry

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
# The collection through its .cache/collections link (`make venv`), as the unit tests import it.
sys.path.insert(0, str(REPO_ROOT / '.cache' / 'collections'))

from ansible_collections.npu.ascend.plugins.action.image_push import ActionModule  # noqa: E402
from ansible_collections.npu.ascend.plugins.plugin_utils import image_assembly, registry_push  # noqa: E402
from ansible_collections.npu.ascend.plugins.plugin_utils.registry_push import RegistryError  # noqa: E402

IMAGE = 'ascend-k8sdeviceplugin:v7.3.0'
DOCKERFILE = b'''FROM ubuntu:22.04
RUN useradd HwHiAiUser
ENV LD_LIBRARY_PATH /usr/local/Ascend/driver/lib64
COPY ./device-plugin /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/device-plugin"]
'''
WRITES = ('POST', 'PUT', 'PATCH', 'DELETE')


def _tar(members):
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode='w') as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return stream.getvalue()


def _base_archive(path):
    # A base image of some size, so that a blob upload streams more than one buffer.
    layer = _tar([('bin/sh', b'#!shell\n'), ('usr/lib/blob', os.urandom(3 * 1024 * 1024))])
    config = json.dumps({'architecture': 'amd64', 'os': 'linux', 'config': {'Env': ['PATH=/usr/bin:/bin']},
                         'rootfs': {'type': 'layers', 'diff_ids': ['sha256:' + hashlib.sha256(layer).hexdigest()]}}).encode()
    manifest = json.dumps([{'Config': 'c.json', 'RepoTags': ['ubuntu:22.04'], 'Layers': ['l/layer.tar']}]).encode()
    path.write_bytes(_tar([('l/layer.tar', layer), ('c.json', config), ('manifest.json', manifest)]))


def _component_zip(path, binary=b'\x7fELF plugin'):
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, 'w') as archive:
        for name, data in (('device-plugin', binary), ('Dockerfile', DOCKERFILE)):
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o100000 | 0o500) << 16
            archive.writestr(info, data)
    path.write_bytes(stream.getvalue())


def assembled_archive(directory, image=IMAGE, binary=b'\x7fELF plugin'):
    """The docker save archive the images role assembles from a component zip, as image_assemble writes it."""
    directory.mkdir(parents=True, exist_ok=True)
    base_path, zip_path, dest = directory / 'base.tar', directory / 'plugin.zip', directory / 'image.tar'
    if not base_path.exists():
        _base_archive(base_path)
    _component_zip(zip_path, binary)
    with open(str(zip_path), 'rb') as zip_stream, open(str(base_path), 'rb') as base_stream:
        package = image_assembly.open_package(zip_stream)
        base = image_assembly.open_base(base_stream)
        plan = image_assembly.plan_archive(package, base, image, 'x86_64', zip_path.name)
        with open(str(dest), 'wb') as out:
            image_assembly.write_archive(plan, base, out)
    return dest


def archive_digests(path):
    """{config, layers} digests of a docker save archive, read independently of registry_push."""
    with tarfile.open(str(path)) as archive:
        entry = json.loads(archive.extractfile('manifest.json').read())[0]

        def digest(name):
            return 'sha256:' + hashlib.sha256(archive.extractfile(name).read()).hexdigest()
        return {'config': digest(entry['Config']), 'layers': [digest(name) for name in entry['Layers']]}


@pytest.fixture(scope='module')
def served(tmp_path_factory):
    with registry.running(tmp_path_factory.mktemp('registry')) as running:
        yield running


def _client(served, **options):
    options.setdefault('ca_file', str(served.ca_file))
    options.setdefault('timeout', 20)
    return registry_push.Registry(options.pop('address', served.address + '/ascend'), **options)


def _writes(client):
    return [(method, path) for method, path, _status in client.requests if method in WRITES]


def test_push_then_nothing_is_sent_the_second_time(served, tmp_path):
    archive = assembled_archive(tmp_path)
    expected = archive_digests(archive)
    first_client = _client(served)
    first = registry_push.push(str(archive), IMAGE, first_client)
    assert first['changed'] and first['reference'] == served.address + '/ascend/ascend-k8sdeviceplugin:v7.3.0'
    assert sorted(first['uploaded']) == sorted([expected['config']] + expected['layers'])
    assert [m for m, _p in _writes(first_client)] == ['POST', 'PUT'] * 3 + ['PUT']
    # What the registry holds, asked by tag, is the archive: the manifest's digest, its config and layers.
    status, headers, body = served.get('/v2/ascend/ascend-k8sdeviceplugin/manifests/v7.3.0',
                                       accept=registry_push.OCI_MANIFEST)
    assert status == 200
    assert headers['Docker-Content-Digest'] == first['digest'] == 'sha256:' + hashlib.sha256(body).hexdigest()
    manifest = json.loads(body)
    assert manifest['config']['digest'] == expected['config']
    assert [layer['digest'] for layer in manifest['layers']] == expected['layers']
    assert [layer['mediaType'] for layer in manifest['layers']] == ['application/vnd.oci.image.layer.v1.tar'] * 2
    for digest in [expected['config']] + expected['layers']:
        status, _headers, blob = served.get('/v2/ascend/ascend-k8sdeviceplugin/blobs/' + digest)
        assert status == 200 and 'sha256:' + hashlib.sha256(blob).hexdigest() == digest
    # Again: one HEAD of the manifest (after the /v2/ ping), nothing uploaded.
    second_client = _client(served)
    second = registry_push.push(str(archive), IMAGE, second_client)
    assert not second['changed'] and second['uploaded'] == [] and second['digest'] == first['digest']
    assert _writes(second_client) == []
    assert [(m, p) for m, p, _s in second_client.requests] == [
        ('GET', '/v2/'), ('HEAD', '/v2/ascend/ascend-k8sdeviceplugin/manifests/v7.3.0')]


def test_a_new_version_uploads_only_the_blobs_the_registry_lacks(served, tmp_path):
    registry_push.push(str(assembled_archive(tmp_path / 'old', image='ascend-k8sdeviceplugin:v7.3.0')), IMAGE, _client(served))
    newer = assembled_archive(tmp_path / 'old', image='ascend-k8sdeviceplugin:v7.3.1', binary=b'\x7fELF newer plugin')
    expected = archive_digests(newer)
    client = _client(served)
    result = registry_push.push(str(newer), 'ascend-k8sdeviceplugin:v7.3.1', client)
    # The base layer is there already (same base archive): the new layer and config go up, not the base.
    assert sorted(result['uploaded']) == sorted([expected['config'], expected['layers'][1]])
    assert expected['layers'][0] in result['present']
    assert [m for m, _p in _writes(client)] == ['POST', 'PUT', 'POST', 'PUT', 'PUT']


def test_check_mode_asks_and_sends_nothing(served, tmp_path):
    archive = assembled_archive(tmp_path, image='npu-exporter:v7.3.0')
    client = _client(served)
    result = registry_push.push(str(archive), 'npu-exporter:v7.3.0', client, check_mode=True)
    assert result['changed'] and len(result['uploaded']) == 3 and _writes(client) == []
    assert served.get('/v2/ascend/npu-exporter/manifests/v7.3.0', accept=registry_push.OCI_MANIFEST)[0] == 404


def test_an_oci_layout_archive_keeps_its_manifest_digest(served, tmp_path):
    layer = _tar([('hello', b'hello\n')])
    config = json.dumps({'architecture': 'amd64', 'os': 'linux',
                         'rootfs': {'type': 'layers', 'diff_ids': ['sha256:' + hashlib.sha256(layer).hexdigest()]}}).encode()
    manifest = json.dumps({'schemaVersion': 2, 'mediaType': registry_push.OCI_MANIFEST,
                           'config': {'mediaType': registry_push.OCI_CONFIG, 'size': len(config),
                                      'digest': 'sha256:' + hashlib.sha256(config).hexdigest()},
                           'layers': [{'mediaType': 'application/vnd.oci.image.layer.v1.tar', 'size': len(layer),
                                       'digest': 'sha256:' + hashlib.sha256(layer).hexdigest()}]}, indent=3).encode()
    manifest_digest = 'sha256:' + hashlib.sha256(manifest).hexdigest()
    index = json.dumps({'schemaVersion': 2, 'manifests': [
        {'mediaType': registry_push.OCI_MANIFEST, 'digest': manifest_digest, 'size': len(manifest),
         'annotations': {'io.containerd.image.name': 'docker.io/library/busybox:1.36'}}]}).encode()
    path = tmp_path / 'busybox.tar'
    path.write_bytes(_tar([('oci-layout', b'{"imageLayoutVersion":"1.0.0"}'), ('index.json', index)]
                          + [('blobs/sha256/' + hashlib.sha256(data).hexdigest(), data) for data in (layer, config, manifest)]))
    result = registry_push.push(str(path), 'busybox:1.36', _client(served))
    assert result['digest'] == manifest_digest
    status, headers, body = served.get('/v2/ascend/busybox/manifests/1.36', accept=registry_push.OCI_MANIFEST)
    assert status == 200 and body == manifest and headers['Docker-Content-Digest'] == manifest_digest


def test_an_unknown_ca_is_refused_with_the_registry_and_the_opt_out(served, tmp_path):
    archive = assembled_archive(tmp_path, image='refused:v1')
    for ca_file in (str(served.other_ca_file), ''):
        with pytest.raises(RegistryError) as refused:
            registry_push.push(str(archive), 'refused:v1', _client(served, ca_file=ca_file))
        message = str(refused.value)
        assert served.address + '/ascend' in message and 'not trusted' in message
        assert 'images_registry_ca_file' in message and 'images_registry_insecure=true' in message
    assert served.get('/v2/ascend/refused/manifests/v1')[0] == 404
    # The opt-out: the certificate is not verified, the push goes through.
    assert registry_push.push(str(archive), 'refused:v1', _client(served, ca_file='', insecure=True))['changed']


def test_plain_http_is_refused_without_the_opt_out(tmp_path):
    with registry.running(tmp_path / 'http', tls=False) as plain:
        archive = assembled_archive(tmp_path, image='plain:v1')
        with pytest.raises(RegistryError) as refused:
            _client(plain, address='http://%s/ascend' % plain.address, ca_file='')
        message = str(refused.value)
        assert 'http://%s/ascend' % plain.address in message and 'plain HTTP' in message
        assert 'images_registry_insecure=true' in message
        assert plain.get('/v2/_catalog')[2] == b'{"repositories":[]}\n'
        # A registry named without http:// is asked over TLS, which a plain-HTTP one does not speak.
        with pytest.raises(RegistryError, match='TLS failed'):
            registry_push.push(str(archive), 'plain:v1', _client(plain, address=plain.address, ca_file=''))
        pushed = registry_push.push(str(archive), 'plain:v1', _client(plain, address='http://' + plain.address,
                                                                      ca_file='', insecure=True))
        assert pushed['changed'] and plain.get('/v2/plain/manifests/v1', accept=registry_push.OCI_MANIFEST)[0] == 200


def _action(tmp_path, check_mode=False, **args):
    task = mock.MagicMock()
    task.async_val = 0
    task.check_mode = check_mode
    task.action = 'npu.ascend.image_push'
    task.args = args
    connection = mock.MagicMock()
    connection._shell.tmpdir = str(tmp_path)
    action = ActionModule(task, connection, mock.MagicMock(), mock.MagicMock(), mock.MagicMock(), mock.MagicMock())
    return action.run(task_vars={})


def test_the_action_reports_and_fails_with_messages(served, tmp_path):
    archive = str(assembled_archive(tmp_path, image='action:v1'))
    common = dict(archive=archive, image='action:v1', registry=served.address + '/site', ca_file=str(served.ca_file))
    dry = _action(tmp_path, check_mode=True, **common)
    assert dry['changed'] and len(dry['uploaded']) == 3 and not dry.get('failed'), dry
    assert served.get('/v2/site/action/manifests/v1')[0] == 404
    done = _action(tmp_path, **common)
    assert done['changed'] and done['reference'] == served.address + '/site/action:v1', done
    assert not _action(tmp_path, **common)['changed']
    assert not _action(tmp_path, check_mode=True, **common)['changed']
    missing = _action(tmp_path, **{**common, 'archive': str(tmp_path / 'nothing.tar')})
    assert missing['failed'] and 'nothing.tar' in missing['msg'] and 'Fix:' in missing['msg']
    not_a_registry = _action(tmp_path, **{**common, 'registry': 'site/ascend'})
    assert not_a_registry['failed'] and 'names no registry host' in not_a_registry['msg']
    unreadable_ca = _action(tmp_path, **{**common, 'ca_file': str(tmp_path / 'no-ca.pem')})
    assert unreadable_ca['failed'] and 'no-ca.pem' in unreadable_ca['msg'] and 'images_registry_ca_file' in unreadable_ca['msg']


def test_a_registry_that_does_not_answer_is_a_message_within_the_timeout(tmp_path):
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(5)
    accepted = []
    stop = threading.Event()

    def accept():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])  # and never answer
            except socket.timeout:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    address = '127.0.0.1:%d' % listener.getsockname()[1]
    archive = str(assembled_archive(tmp_path, image='silent:v1'))
    try:
        started = time.monotonic()
        result = _action(tmp_path, archive=archive, image='silent:v1', registry=address, timeout=1.5)
        assert time.monotonic() - started < 10
        assert result['failed'] and address in result['msg'] and 'no answer within 1.5 s' in result['msg']
    finally:
        stop.set()
        thread.join(5)
        for connection in accepted:
            connection.close()
        listener.close()
    closed = _action(tmp_path, archive=archive, image='silent:v1', registry=address, timeout=1.5)
    assert closed['failed'] and address in closed['msg'] and 'reachable' in closed['msg']


CONTAINERD = shutil.which('containerd') or '/usr/bin/containerd'
CTR = shutil.which('ctr') or '/usr/bin/ctr'


@contextlib.contextmanager
def _containerd():
    """A containerd of its own (Debian's, the release a Debian node runs; `make deps` installs it), with
    a socket, root and state under a short temporary directory, CRI left out; yields the ctr argv."""
    directory = tempfile.mkdtemp(prefix='/tmp/npu-ctrd-')
    config = os.path.join(directory, 'config.toml')
    with open(config, 'w') as stream:
        stream.write('version = 2\nroot = "%s/root"\nstate = "%s/state"\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
                     '[grpc]\n  address = "%s/c.sock"\n' % (directory, directory, directory))
    log = open(os.path.join(directory, 'log'), 'wb')
    process = subprocess.Popen([CONTAINERD, '--config', config], stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    ctr = [CTR, '--address', os.path.join(directory, 'c.sock'), '--namespace', 'k8s.io']
    try:
        deadline = time.monotonic() + 30
        while subprocess.run(ctr + ['version'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             timeout=20, check=False).returncode != 0:
            assert process.poll() is None and time.monotonic() < deadline, open(log.name).read()
            time.sleep(0.3)
        yield ctr
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)
        log.close()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.skipif(not os.path.exists(CONTAINERD) or os.geteuid() != 0, reason='needs Debian\'s containerd, as root')
def test_containerd_pulls_and_unpacks_what_was_pushed(served, tmp_path):
    archive = assembled_archive(tmp_path, image='ascend-k8sdeviceplugin:v7.3.2', binary=b'\x7fELF pulled')
    pushed = registry_push.push(str(archive), 'ascend-k8sdeviceplugin:v7.3.2', _client(served))
    # As a node is told to trust the registry: certs.d/<host:port>/hosts.toml naming its CA (ctr would
    # otherwise try plain HTTP for a loopback address).
    hosts_dir = tmp_path / 'certs.d'
    (hosts_dir / served.address).mkdir(parents=True)
    (hosts_dir / served.address / 'hosts.toml').write_text(
        'server = "https://%s"\n[host."https://%s"]\n  capabilities = ["pull", "resolve"]\n  ca = "%s"\n'
        % (served.address, served.address, served.ca_file))
    with _containerd() as ctr:
        # Unpacking checks each layer against the config's diff_ids: the manifest made from the
        # docker save archive must be one containerd accepts as it is.
        pulled = subprocess.run(ctr + ['images', 'pull', '--snapshotter', 'native', '--hosts-dir', str(hosts_dir),
                                       pushed['reference']], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                universal_newlines=True, timeout=120, check=False)
        assert pulled.returncode == 0, pulled.stdout
        assert 'unpacking linux/amd64 %s' % pushed['digest'] in pulled.stdout, pulled.stdout
        listed = subprocess.run(ctr + ['images', 'ls'], stdout=subprocess.PIPE, universal_newlines=True, timeout=20,
                                check=True).stdout
        assert any(line.split()[:3] == [pushed['reference'], 'application/vnd.oci.image.manifest.v1+json', pushed['digest']]
                   for line in listed.splitlines()), listed


def _bcrypt(password):
    """The bcrypt hash the registry's htpasswd file needs, from the C library's crypt(3) (libxcrypt
    on Debian); None where Python or the library lacks it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', DeprecationWarning)
            import crypt  # pylint: disable=deprecated-module,import-outside-toplevel
        hashed = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH))
    except (ImportError, AttributeError, OSError):
        return None
    return hashed if hashed and hashed.startswith('$2') else None


@pytest.mark.skipif(_bcrypt('probe') is None, reason='no bcrypt in crypt(3) for the htpasswd file')
def test_a_registry_that_asks_for_credentials(tmp_path):
    with registry.running(tmp_path / 'auth', htpasswd={'pusher': _bcrypt('s3cret')}) as guarded:
        archive = str(assembled_archive(tmp_path, image='guarded:v1'))
        with pytest.raises(RegistryError) as refused:
            registry_push.push(archive, 'guarded:v1', _client(guarded))
        assert 'asks for credentials' in str(refused.value) and guarded.address in str(refused.value)
        assert 'images_registry_username' in str(refused.value)
        with pytest.raises(RegistryError) as wrong:
            registry_push.push(archive, 'guarded:v1', _client(guarded, username='pusher', password='not-the-pa55word'))
        assert 'HTTP 401' in str(wrong.value) and 'images_registry_password' in str(wrong.value)
        assert 'not-the-pa55word' not in str(wrong.value)
        client = _client(guarded, username='pusher', password='s3cret')
        assert registry_push.push(archive, 'guarded:v1', client)['changed']
        again = _client(guarded, username='pusher', password='s3cret')
        assert not registry_push.push(archive, 'guarded:v1', again)['changed'] and _writes(again) == []
