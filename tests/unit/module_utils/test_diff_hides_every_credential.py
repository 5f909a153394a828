# -*- coding: utf-8 -*-
"""Issue 30, finding 3: no credential reaches a ``--diff``, whatever its spelling or place.

Masked before: the values of password, auth, token, identitytoken. Shown in clear: registry
headers, credentials in URLs (mirrors, Docker's proxies, containerd endpoints) and keys spelled
with escapes. Redaction now goes by the parsed structure (``config_redaction.redact_config_text``).
"""

import json

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_files, config_redaction
from ansible_collections.npu.ascend.plugins.modules import docker_runtime

pytest.importorskip('tomlkit')

from ansible_collections.npu.ascend.plugins.modules import containerd_runtime  # noqa: E402

DOCKER = r'''{
  "registry-mirrors": ["https://mirror-user:mirror-pw@mirror.example", "https://plain.example"],
  "proxies": {"http-proxy": "http://proxy-user:proxy-pw@proxy.example:3128", "no-proxy": "localhost"},
  "auths": {"reg": {"pass\u0077ord": "escaped-pw", "\u0074oken": "escaped-tok"}},
  "debug": true
}
'''

CONTAINERD = r'''version = 2
[plugins."io.containerd.grpc.v1.cri".registry.headers]
  Authorization = ["Basic aGVhZGVyOnNlY3JldA=="]
  X-Api-Key = "header-api-key"
[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
  endpoint = ["https://endpoint-user:endpoint-pw@mirror.example"]  # a mirror
[plugins."io.containerd.grpc.v1.cri".registry.configs."reg".auth]
  username = "robot"
  "pass\u0077ord" = "toml-escaped-pw"
'''
SECRETS = ('mirror-pw', 'proxy-pw', 'escaped-pw', 'escaped-tok', 'aGVhZGVyOnNlY3JldA==', 'header-api-key',
           'endpoint-pw', 'toml-escaped-pw', 'mirror-user', 'proxy-user', 'endpoint-user')


def test_docker_mirrors_proxies_and_escaped_keys_are_hidden():
    redacted = config_redaction.redact_config_text(DOCKER, 'json')
    for secret in SECRETS:
        assert secret not in redacted
    document = json.loads(redacted)
    assert document['registry-mirrors'] == ['https://********@mirror.example', 'https://plain.example']
    assert document['proxies'] == {'http-proxy': 'http://********@proxy.example:3128', 'no-proxy': 'localhost'}
    assert document['auths']['reg'] == {'password': '********', 'token': '********'}
    assert '"debug": true' in redacted


def test_containerd_headers_endpoints_and_escaped_keys_are_hidden():
    redacted = config_redaction.redact_config_text(CONTAINERD, 'toml')
    for secret in SECRETS:
        assert secret not in redacted
    assert 'username = "robot"' in redacted and '# a mirror' in redacted
    assert 'https://********@mirror.example' in redacted


@pytest.mark.parametrize('text, kind', [
    (DOCKER.replace('"debug": true', '"debug": tru'), 'json'),
    (CONTAINERD + '[broken\n', 'toml'),
])
def test_text_that_does_not_parse_is_redacted_line_by_line(text, kind):
    redacted = config_redaction.redact_config_text(text, kind)
    for secret in SECRETS:
        assert secret not in redacted
    # What is not suspect stays readable.
    assert ('"debug": tru' if kind == 'json' else 'username = "robot"') in redacted


def test_the_diff_of_both_modules_hides_them(tmp_path, run_module):
    daemon = tmp_path / 'daemon.json'
    daemon.write_text(DOCKER)
    config = tmp_path / 'config.toml'
    config.write_text(CONTAINERD)
    for module, path in ((docker_runtime, daemon), (containerd_runtime, config)):
        result = run_module(module, {'path': str(path)}, check_mode=True)
        assert result['changed']
        for side in ('before', 'after'):
            for secret in SECRETS:
                assert secret not in result['diff'][side]


def test_redact_secrets_guesses_the_kind():
    assert 'escaped-pw' not in config_files.redact_secrets(DOCKER)
    assert 'toml-escaped-pw' not in config_files.redact_secrets(CONTAINERD)


_USER = st.text(alphabet='abcdefghijklmnopqrstuvwxyz0123456789-._~%!$&()*+,;=', min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(user=_USER, password=_USER, kind=st.sampled_from(['json', 'toml']),
       key=st.sampled_from(['registry-mirrors', 'endpoint', 'http-proxy', 'anything']))
def test_no_url_userinfo_survives(user, password, kind, key):
    url = 'https://%s:%s@host.example/v2' % (user, password)
    if kind == 'json':
        text = json.dumps({key: [url]}, indent=2)
    else:
        text = '[section]\n"%s" = ["%s"]\n' % (key, url)
    redacted = config_redaction.redact_config_text(text, kind)
    assert ':%s@' % password not in redacted and '//%s:' % user not in redacted
    assert 'host.example/v2' in redacted
    assert config_redaction.redact_config_text(redacted, kind) == redacted
