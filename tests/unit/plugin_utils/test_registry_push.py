# -*- coding: utf-8 -*-
"""The planning half of the images role's registry mode (registry_push): the registry's name, the
names the pods pull, which images and which blobs are sent, the archive read as the registry will
hold it, the authentication challenge. tests/k8s/test_registry_push.py pushes to a real registry."""

import gzip
import hashlib
import io
import json
import tarfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils import registry_push
from ansible_collections.npu.ascend.plugins.plugin_utils.image_delivery import ImageReferenceError, parse_reference
from ansible_collections.npu.ascend.plugins.plugin_utils.registry_push import RegistryError


def _tar(members):
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode='w') as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    stream.seek(0)
    return tarfile.open(fileobj=stream, mode='r:')


def _sha(data):
    return 'sha256:' + hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize('text, prefix, scheme', [
    ('registry.example.com', 'registry.example.com', 'https'),
    ('registry.example.com:5000/ascend/', 'registry.example.com:5000/ascend', 'https'),
    ('https://10.0.0.5:443/a/b', '10.0.0.5:443/a/b', 'https'),
    ('localhost/x', 'localhost/x', 'https'),
    ('[fd00::1]:5000', '[fd00::1]:5000', 'https'),
])
def test_registry_names(text, prefix, scheme):
    parsed = registry_push.parse_registry(text)
    assert parsed['prefix'] == prefix and parsed['scheme'] == scheme


@pytest.mark.parametrize('text, cause', [
    ('http://registry.example.com', 'plain HTTP'),
    ('ftp://registry.example.com', 'neither https nor http'),
    ('registry/ascend', 'names no registry host'),
    ('registry.example.com/Ascend', 'not host[:port][/path]'),
    ('registry.example.com:99999', 'not host[:port][/path]'),
    ('', 'host[:port][/path]'),
])
def test_registry_names_refused(text, cause):
    with pytest.raises(RegistryError, match=cause.replace('[', r'\[').replace(']', r'\]')):
        registry_push.parse_registry(text)


def test_http_is_accepted_with_the_opt_out_only():
    assert registry_push.parse_registry('http://r.example:5000', insecure=True)['url'] == 'http://r.example:5000'
    with pytest.raises(RegistryError, match='images_registry_insecure=true'):
        registry_push.parse_registry('http://r.example:5000')


@pytest.mark.parametrize('image, reference', [
    ('ascend-k8sdeviceplugin:v7.3.0', 'r.example:5000/ascend/ascend-k8sdeviceplugin:v7.3.0'),
    ('docker.io/library/busybox:1.36', 'r.example:5000/ascend/busybox:1.36'),
    ('swr.cn-south-1.myhuaweicloud.com/ascendhub/npu-exporter:v7.3.0', 'r.example:5000/ascend/npu-exporter:v7.3.0'),
    ('busybox', 'r.example:5000/ascend/busybox:latest'),
])
def test_the_name_pods_pull(image, reference):
    assert registry_push.registry_reference(image, 'r.example:5000/ascend') == reference
    assert registry_push.registry_reference(image, '') == image
    assert registry_push.repository_and_tag(image, 'ascend') == tuple(reference.split('/', 1)[1].rsplit(':', 1))


def test_a_digest_cannot_be_pushed_by_tag():
    with pytest.raises(ImageReferenceError):
        registry_push.registry_reference('busybox@sha256:' + 'a' * 64, 'r.example')


_COMPONENT = st.from_regex(r'\A[a-z0-9]{1,8}(?:[._-][a-z0-9]{1,8}){0,2}\Z')


@settings(max_examples=200, deadline=None)
@given(host=st.from_regex(r'\A[a-z0-9]{1,10}\.[a-z]{2,5}\Z'), port=st.one_of(st.none(), st.integers(1, 65535)),
       path=st.lists(_COMPONENT, max_size=3), name=_COMPONENT, tag=st.from_regex(r'\A\w[\w.-]{0,20}\Z'))
def test_any_registry_and_image_give_a_reference_the_kubelet_reads_back(host, port, path, name, tag):
    registry = host + (':%d' % port if port else '') + ''.join('/' + p for p in path)
    reference = registry_push.registry_reference('%s:%s' % (name, tag), registry)
    parsed = parse_reference(reference)
    # The kubelet reads the registry as the domain (not Docker Hub), the path and tag unchanged.
    assert parsed['domain'] == registry.split('/', 1)[0] and parsed['tag'] == tag
    assert parsed['path'] == '/'.join(path + [name])
    assert registry_push.repository_and_tag('%s:%s' % (name, tag), '/'.join(path)) == (parsed['path'], tag)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_registry_text_is_parsed_or_refused_with_a_message(text):
    try:
        parsed = registry_push.parse_registry(text)
    except RegistryError as error:
        assert 'images_registry' in str(error)
    else:
        assert parsed['scheme'] == 'https' and parsed['url'].startswith('https://')


@pytest.mark.parametrize('header, scheme, params', [
    ('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"',
     'bearer', {'realm': 'https://auth.example/token', 'service': 'registry.example', 'scope': 'repository:a/b:pull'}),
    ('Basic realm="Registry Realm"', 'basic', {'realm': 'Registry Realm'}),
    ('Bearer realm=https://a.example/t, service=r', 'bearer', {'realm': 'https://a.example/t', 'service': 'r'}),
    ('', '', {}),
])
def test_challenges(header, scheme, params):
    assert registry_push.parse_challenge(header) == (scheme, params)


_VALUE = st.text(alphabet=st.characters(blacklist_categories=('Cs', 'Cc')), max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.from_regex(r'\A[a-z][a-z0-9_]{0,10}\Z'), _VALUE, max_size=4))
def test_any_quoted_challenge_reads_back(params):
    quoted = ','.join('%s="%s"' % (key, value.replace('\\', '\\\\').replace('"', '\\"')) for key, value in params.items())
    assert registry_push.parse_challenge('Bearer ' + quoted) == ('bearer', params)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_challenge_text_is_read_without_error(header):
    scheme, params = registry_push.parse_challenge(header)
    assert scheme == scheme.lower() and all(key == key.lower() for key in params)


_DIGESTS = st.lists(st.sampled_from(['sha256:' + c * 64 for c in 'abcdef']), max_size=12)


@settings(max_examples=200, deadline=None)
@given(digests=_DIGESTS, present=st.sets(st.sampled_from(['sha256:' + c * 64 for c in 'abcdef'])))
def test_each_missing_blob_is_uploaded_once_in_order(digests, present):
    blobs = [{'digest': d, 'size': 1} for d in digests]
    upload = [b['digest'] for b in registry_push.blobs_to_upload(blobs, present)]
    assert len(upload) == len(set(upload))
    assert set(upload) == set(digests) - present
    assert upload == [d for i, d in enumerate(digests) if d not in present and d not in digests[:i]]


def test_the_tag_is_pushed_when_missing_or_different():
    assert registry_push.push_needed('sha256:' + 'a' * 64, None)
    assert registry_push.push_needed('sha256:' + 'a' * 64, 'sha256:' + 'b' * 64)
    assert not registry_push.push_needed('sha256:' + 'a' * 64, 'sha256:' + 'a' * 64)


def _docker_save(tags=('ascend-k8sdeviceplugin:v7.3.0',), layers=(b'layer one', b'layer one'), extra=()):
    config = b'{"architecture":"amd64"}'
    entries = [{'Config': 'c.json', 'RepoTags': list(tags), 'Layers': ['l%d/layer.tar' % i for i in range(len(layers))]}]
    entries += list(extra)
    return _tar([('l%d/layer.tar' % i, data) for i, data in enumerate(layers)]
                + [('c.json', config), ('manifest.json', json.dumps(entries).encode())]), config


def test_a_docker_save_archive_becomes_an_oci_manifest_with_each_blob_once():
    gzipped = gzip.compress(b'layer two')
    archive, config = _docker_save(layers=(b'layer one', gzipped, b'layer one'))
    plan = registry_push.read_archive_image(archive, 'docker.io/library/ascend-k8sdeviceplugin:v7.3.0')
    manifest = json.loads(plan['manifest'])
    assert plan['digest'] == _sha(plan['manifest']) and plan['media_type'] == registry_push.OCI_MANIFEST
    assert manifest['config'] == {'mediaType': registry_push.OCI_CONFIG, 'digest': _sha(config), 'size': len(config)}
    assert [(l['digest'], l['mediaType']) for l in manifest['layers']] == [
        (_sha(b'layer one'), 'application/vnd.oci.image.layer.v1.tar'),
        (_sha(gzipped), 'application/vnd.oci.image.layer.v1.tar+gzip'),
        (_sha(b'layer one'), 'application/vnd.oci.image.layer.v1.tar')]
    assert [b['digest'] for b in plan['blobs']] == [_sha(config), _sha(b'layer one'), _sha(gzipped)]
    # The same archive gives the same manifest bytes: a second run finds the registry's digest equal.
    again = registry_push.read_archive_image(_docker_save(layers=(b'layer one', gzipped, b'layer one'))[0],
                                             'ascend-k8sdeviceplugin:v7.3.0')
    assert again['manifest'] == plan['manifest']


def test_the_image_is_chosen_by_its_tag_or_as_the_only_one():
    other = {'Config': 'c.json', 'RepoTags': ['npu-exporter:v7.3.0'], 'Layers': ['l0/layer.tar']}
    archive, _config = _docker_save(extra=[other])
    assert len(registry_push.read_archive_image(archive, 'npu-exporter:v7.3.0')['blobs']) == 2
    with pytest.raises(RegistryError, match='holds 2 images and none is tagged busybox:1'):
        registry_push.read_archive_image(_docker_save(extra=[other])[0], 'busybox:1')
    # One image saved under another name (Huawei's registry name) is the one pushed.
    only, _config = _docker_save(tags=('swr.example.com/ascendhub/ascend-k8sdeviceplugin:v7.3.0',))
    assert registry_push.read_archive_image(only, 'ascend-k8sdeviceplugin:v7.3.0')['blobs']


@pytest.mark.parametrize('members, cause', [
    ([('hello', b'x')], 'neither a `docker save` archive'),
    ([('manifest.json', b'[]')], 'lists no image'),
    ([('manifest.json', b'not json')], 'cannot be read as an image'),
    ([('manifest.json', b'[{"Config": "c.json", "Layers": []}]')], 'lacks c.json'),
    ([('index.json', b'{"manifests": []}')], 'lists 0 images'),
])
def test_archives_that_are_not_one_image_are_messages(members, cause):
    with pytest.raises(RegistryError, match=cause.replace('`', '.')):
        registry_push.read_archive_image(_tar(members), 'a:b')


def test_an_oci_index_of_several_architectures_is_refused():
    inner = json.dumps({'mediaType': registry_push.OCI_INDEX, 'manifests': []}).encode()
    index = json.dumps({'manifests': [{'digest': _sha(inner)}]}).encode()
    archive = _tar([('index.json', index), ('blobs/sha256/' + _sha(inner)[7:], inner)])
    with pytest.raises(RegistryError, match='index of several architectures'):
        registry_push.read_archive_image(archive, 'a:b')


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600))
def test_any_manifest_json_bytes_are_read_or_refused_with_a_message(data):
    try:
        plan = registry_push.read_archive_image(_tar([('manifest.json', data), ('c.json', b'{}')]), 'a:b')
    except RegistryError as error:
        assert str(error)
    else:
        assert plan['digest'] == _sha(plan['manifest'])


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=16))
def test_layer_media_types(head):
    media_type = registry_push.layer_media_type(head)
    if head.startswith(b'\x1f\x8b'):
        assert media_type.endswith('+gzip')
    elif head.startswith(b'\x28\xb5\x2f\xfd'):
        assert media_type.endswith('+zstd')
    else:
        assert media_type == 'application/vnd.oci.image.layer.v1.tar'
