# -*- coding: utf-8 -*-
"""The pure parts of runtime_config/config_files.py: which backups are ours, and redaction of secrets in diffs."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_files as files

CONFIG = '/etc/containerd/config.toml'


@pytest.mark.parametrize('candidate, ours', [
    ('/etc/containerd/config.toml.1234.2025-01-01@10:00:00~', True),
    ('/etc/containerd/config.toml.1.2026-12-31@23:59:59~', True),
    ('/etc/containerd/config.toml', False),
    ('/etc/containerd/config.toml.before-upgrade', False),
    ('/etc/containerd/config.toml.1234.2025-01-01@10:00:00', False),
    ('/etc/containerd/config.toml.x.2025-01-01@10:00:00~', False),
    ('/etc/containerd/other.toml.1234.2025-01-01@10:00:00~', False),
    ('/tmp/config.toml.1234.2025-01-01@10:00:00~', False),
    ('/etc/containerd/sub/config.toml.1234.2025-01-01@10:00:00~', False),
    ('/etc/containerd/config.toml.1234.2025-01-01@10:00:00~/../../passwd', False),
    ('/etc/passwd', False),
])
def test_is_own_backup(candidate, ours):
    assert files._is_own_backup(CONFIG, candidate) is ours


DOCKER = '''{
  "auths": {
    "registry.example": {"auth": "dXNlcjpzZWNyZXQ=", "identitytoken": "id-123"},
    "other": {"Password": "p\\"ss", "registrytoken": "rt"}
  },
  "debug": true,
  "authorization-plugins": ["x"]
}
'''

CONTAINERD = '''version = 2
[plugins."io.containerd.grpc.v1.cri".registry.configs."reg.example".auth]
  username = "robot"
  password = "s3cr3t"
  auth = 'dXNlcg=='
  identitytoken = """multi
line"""
[plugins."io.containerd.grpc.v1.cri".registry.configs."other".auth]
  "token" = "tt"
inline = { password = "inl-pw", user = "u" }
tokenizer = "not a secret"
'''


def test_docker_secrets_are_redacted_and_the_rest_kept():
    redacted = files.redact_secrets(DOCKER)
    for secret in ('dXNlcjpzZWNyZXQ=', 'id-123', 'p\\"ss', '"rt"'):
        assert secret not in redacted
    assert '"auth": "********"' in redacted and '"Password": "********"' in redacted
    assert '"debug": true' in redacted and '"authorization-plugins": ["x"]' in redacted
    assert json.loads(redacted)['auths']['registry.example']['identitytoken'] == '********'


def test_containerd_secrets_are_redacted_and_the_rest_kept():
    redacted = files.redact_secrets(CONTAINERD)
    for secret in ('s3cr3t', 'dXNlcg==', 'multi', '"tt"', 'inl-pw'):
        assert secret not in redacted
    assert 'username = "robot"' in redacted and 'tokenizer = "not a secret"' in redacted
    assert '"token" = "********"' in redacted and 'user = "u"' in redacted
    assert redacted.count('********') == 5


def test_empty_and_none_pass_through():
    assert files.redact_secrets('') == '' and files.redact_secrets(None) is None


_KEYS = st.sampled_from(['auth', 'Password', 'TOKEN', 'identitytoken', 'registrytoken', 'secret'])
_VALUES = st.text(st.characters(blacklist_categories=('Cs',)), max_size=20)


@settings(max_examples=60, deadline=None)
@given(key=_KEYS, value=_VALUES, other=st.dictionaries(st.sampled_from(['debug', 'log-driver', 'user']), _VALUES))
def test_no_json_secret_survives_and_others_are_untouched(key, value, other):
    document = dict(other, auths={'reg': {key: value}})
    text = json.dumps(document, indent=2)
    redacted = files.redact_secrets(text)
    parsed = json.loads(redacted)
    assert parsed['auths']['reg'][key] == files.REDACTED
    assert {k: v for k, v in parsed.items() if k != 'auths'} == other
    assert files.redact_secrets(redacted) == redacted
