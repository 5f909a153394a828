# -*- coding: utf-8 -*-
"""Issue 40, class 2: no credential reaches the diagnostics bundle (or a diff) from a config the engine refused,
or from a proxy setting, however it is spread or spelled.

Before: a config that does not parse (containerd refuses a table given twice, which an appended snippet makes)
was redacted line by line, and only the first line of a value went: the rest of an array holding ``"Basic ..."``,
the body of a triple-quoted password, a secret inside an inline table under an innocent key, a value on the line
after its key, every value of a ``headers`` table whose key names no credential. And a proxy's password holding
``@`` (Go's net/url, so dockerd and containerd, splits the userinfo at the last ``@``) kept what follows its first
``@``; a proxy without a scheme (``user:password@host:port``, which Go's HTTP client reads as http://) kept it all.
"""

import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils import diagnostics

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_redaction

tomlkit = pytest.importorskip('tomlkit')

SECRETS = ('aGVhZGVyOnNlY3JldA', 'second-header-line', 'triple-quoted-pw', 'literal-triple-pw', 'inline-table-pw',
           'trace-header-value', 'next-line-pw', 'colon-next-line-pw', 'nested-auth-value', 'compact-auth-value',
           'escaped-url-pw', 'comment-then-value-pw')
# As an appended snippet leaves it: the headers table given a second time, which containerd (and TOML) refuse.
REFUSED_TOML = r'''version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "ascend"
[plugins."io.containerd.grpc.v1.cri".registry.headers]
  Authorization = [
    "Basic aGVhZGVyOnNlY3JldA==",
    "second-header-line",
  ]
  X-Trace = "trace-header-value"
[plugins."io.containerd.grpc.v1.cri".registry.configs."reg".auth]
  username = "robot"
  password = """
triple-quoted-pw
"""
  identitytoken = \'\'\'
literal-triple-pw\'\'\'
  auth = # set below
    "comment-then-value-pw"
[plugins."io.containerd.grpc.v1.cri".registry.configs]
  "reg2" = { auth = { password = "inline-table-pw" } }
[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
  endpoint = [
    "https:\/\/mirror-user:escaped-url-pw@mirror.example",
  ]
# appended by a second snippet
[plugins."io.containerd.grpc.v1.cri".registry.headers]
  X-Again = "x"
'''
REFUSED_JSON = '''{
  "auths": {
    "reg": {
      "auth": "nested-auth-value"
    }
  },
  "credHelpers": {"reg": {"auth": "compact-auth-value"}},
  "password":
    "next-line-pw",
  "identitytoken"
    : "colon-next-line-pw",
  "log-level": "info",
  "debug": tru
}
'''


def test_the_refused_toml_really_does_not_parse():
    with pytest.raises(Exception):
        tomlkit.parse(REFUSED_TOML)
    with pytest.raises(ValueError):
        json.loads(REFUSED_JSON)


@pytest.mark.parametrize('name, text', [('etc/containerd/config.toml', REFUSED_TOML),
                                        ('etc/docker/daemon.json', REFUSED_JSON),
                                        ('var/lib/npu_ascend/record', REFUSED_TOML)])
def test_no_line_of_a_multi_line_secret_reaches_the_bundle(name, text):
    redacted = diagnostics.redact(name, text.encode()).decode()
    for secret in SECRETS:
        assert secret not in redacted, redacted
    # Every line keeps its number (containerd's error names one) and what is no credential stays readable.
    assert len(redacted.splitlines()) == len(text.splitlines())
    for readable in ('default_runtime_name = "ascend"', 'username = "robot"', '"log-level": "info"',
                     '"debug": tru', '# appended by a second snippet', 'mirror.example'):
        if readable.split()[0] in text:
            assert readable in redacted, redacted


PROXIES = {
    'http-proxy': 'http://proxy-user:p@ss@word-1@proxy.example:3128',
    'https-proxy': 'proxy-user:schemeless-pw-2@proxy.example:3128',
    'ftp-proxy': "socks5://proxy-user:quo'te-pw-3@proxy.example:1080",
    'no-proxy': 'localhost,.cluster.local',
}
PROXY_SECRETS = ('proxy-user', 'word-1', 'p@ss', 'schemeless-pw-2', "quo'te-pw-3", 'te-pw-3')


@pytest.mark.parametrize('kind, text', [
    ('json', json.dumps({'proxies': PROXIES}, indent=2)),
    ('json', json.dumps({'proxies': PROXIES}, indent=2).replace('}\n}', '},\n  "debug": tru\n}')),
    ('toml', '[proxy]\n' + ''.join('"%s" = "%s"\n' % item for item in PROXIES.items())),
    ('toml', '[proxy]\n' + ''.join('"%s" = "%s"\n' % item for item in PROXIES.items()) + '[proxy]\n'),
])
def test_a_proxy_password_holding_at_or_written_without_a_scheme_is_hidden(kind, text):
    redacted = config_redaction.redact_config_text(text, kind)
    for secret in PROXY_SECRETS:
        assert secret not in redacted, redacted
    assert redacted.count('@proxy.example:') == 3 and 'localhost,.cluster.local' in redacted


def test_userinfo_is_cut_where_go_cuts_it():
    redact = config_redaction.redact_url_userinfo
    assert redact('http://u:p@ss@proxy:3128/path?q=a@b') == 'http://********@proxy:3128/path?q=a@b'
    assert redact('u:pw@proxy:3128') == '********@proxy:3128'
    assert redact('u@proxy:3128', proxy=True) == '********@proxy:3128'
    # Not credentials: an image digest, a registry path, a plain address.
    for value in ('registry.example:5000/pause@sha256:abc', 'pause@sha256:abc', 'u@proxy:3128', 'proxy:3128',
                  'busybox:1.36@sha256:' + 'a' * 64):
        assert redact(value) == value


# Go's net/url accepts these in a userinfo (validUserinfo), '@' included.
_USERINFO = st.text(alphabet='abcdefghijklmnopqrstuvwxyz0123456789-._~!$&\'()*+,;=%@:', min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(password=_USERINFO, scheme=st.sampled_from(['http://', 'https://', 'socks5://', '']),
       kind=st.sampled_from(['json', 'toml']), broken=st.booleans(),
       key=st.sampled_from(['http-proxy', 'https-proxy', 'HTTPS_PROXY', 'httpProxy']))
def test_no_proxy_password_survives(password, scheme, kind, broken, key):
    url = '%suser:Zq9%sZq9@proxy.example:3128' % (scheme, password)
    if kind == 'json':
        text = json.dumps({'proxies': {key: url}}, indent=2)
        text = text.replace('\n}', ',\n  "debug": tru\n}') if broken else text
    else:
        text = '[proxies]\n%s = %s\n' % (json.dumps(key), json.dumps(url)) + ('[proxies]\n' if broken else '')
    redacted = config_redaction.redact_config_text(text, kind)
    assert 'Zq9' not in redacted, redacted
    # The host stays, unless the fallback hid the whole value (a password spelling "pass" or "key" looks like a key).
    assert '@proxy.example:3128' in redacted or (broken and '"%s"' % config_redaction.REDACTED in redacted), redacted


_SECRET = st.text(alphabet='abcdefghijklmnopqrstuvwxyz0123456789+/=-_', min_size=6, max_size=20).map(lambda s: 'Qx7' + s)
_SPREAD = st.sampled_from([
    '[\n    "Basic {s}",\n    "{s}",\n  ]',
    '[ "x",\n "{s}" ]',
    '"""\n{s}\n{s}"""',
    '"""{s}\\\n  {s}\n"""',
    "'''\n{s}\n'''",
    '{{ password = "{s}",\n  token = "{s}" }}',
    '"{s}"',
])


@settings(max_examples=150, deadline=None)
@given(secret=_SECRET, spread=_SPREAD, key=st.sampled_from(['password', 'Authorization', 'X-Custom', '"pass\\u0077ord"']),
       table=st.sampled_from(['registry.configs."r".auth', 'registry.headers']))
def test_a_secret_spread_over_lines_in_a_refused_config_is_hidden_on_every_line(secret, spread, key, table):
    """Any value spread over lines, under a credential key or in a headers table, in a config that does not parse."""
    if key == 'X-Custom' and table != 'registry.headers':
        key = 'password'
    text = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".%s]\n  %s = %s\n  after = "kept"\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "ascend"\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd]\n' % (table, key, spread.format(s=secret)))
    redacted = diagnostics.redact('config.toml', text.encode()).decode()
    assert 'Qx7' not in redacted, redacted
    assert len(redacted.splitlines()) == len(text.splitlines())
    assert 'default_runtime_name = "ascend"' in redacted
    if table != 'registry.headers':
        assert 'after = "kept"' in redacted


def test_a_megabyte_config_of_one_long_word_is_redacted_in_linear_time():
    """The URL pattern tried a scheme at every letter of a word: a 1 MiB config of letters (the bundle's cap) took
    about half an hour, holding the module; in its own process with a deadline, so a regression fails, not hangs."""
    code = ('import sys; sys.path.insert(0, %r); import conftest\n'
            'from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_redaction\n'
            'for text in ("a" * 2 ** 20, "x = \\"" + "a" * 2 ** 20 + "\\n[", "http://" + "a@" * 2 ** 19):\n'
            '    config_redaction.redact_config_text(text, "toml")\n' % os.path.dirname(os.path.dirname(__file__)))
    completed = subprocess.run([sys.executable, '-c', code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True, timeout=60, check=False)
    assert completed.returncode == 0, completed.stdout


# A config that parses, with credentials where the structure does not look: in comments (an operator's old
# password commented out, a header kept for reference, a URL noted beside a line) and under a credential key
# whose value is a table.
COMMENTED_TOML = '''version = 2
# password = "commented-out-pw"
[plugins."io.containerd.grpc.v1.cri".registry.configs."r".auth]
  username = "robot"
  # old: password = "old-pw"
  password = "new-pw"  # was "Basic trailing-note-pw"
  identitytoken = [
    # the one before: first-array-note-pw
    "array-pw",
  ]
[plugins."io.containerd.grpc.v1.cri".registry.headers]
  # X-Registry-Id = "header-note-value"
  X = "header-value"
[plugins."io.containerd.grpc.v1.cri".registry.mirrors."d"]
  endpoint = ["https://m.example"]  # https://u:comment-url-pw@m.example
[extra]
  token = {value = "table-valued-pw"}
  note = "kept"  # kept too
'''
COMMENTED_SECRETS = ('commented-out-pw', 'old-pw', 'new-pw', 'trailing-note-pw', 'first-array-note-pw', 'array-pw',
                     'header-note-value', 'header-value', 'comment-url-pw', 'table-valued-pw')


def test_credentials_in_comments_and_under_a_credential_key_holding_a_table_are_hidden():
    tomlkit.parse(COMMENTED_TOML)  # it parses: the structure decides, and comments are part of the text shown
    redacted = config_redaction.redact_config_text(COMMENTED_TOML, 'toml')
    for secret in COMMENTED_SECRETS:
        assert secret not in redacted, redacted
    for readable in ('username = "robot"', 'note = "kept"  # kept too', '# https://********@m.example',
                     'endpoint = ["https://m.example"]'):
        assert readable in redacted, redacted
    assert len(redacted.splitlines()) == len(COMMENTED_TOML.splitlines())
    document = json.loads(config_redaction.redact_config_text('{"password": {"value": "json-table-pw"}, "x": 1}',
                                                              'json'))
    assert document == {'password': {'value': config_redaction.REDACTED}, 'x': 1}


@pytest.mark.parametrize('name, text', [
    ('daemon.json', r'{"registry-mirrors": ["https://u:surrogate-pw@mirror\ud800.example"]}'),
    ('daemon.json', '{"registry-mirrors": [\n  "https:\\/\\/u:surrogate-pw@mirror\\ud800.example"\n], "debug": tru}'),
    ('config.toml', 'endpoint = ["https://u:surrogate-pw@mirror\\ud800.example"]\n'),
])
def test_a_lone_surrogate_escape_beside_a_credential_is_a_bundle_entry_not_a_traceback(name, text):
    """JSON reads "\\ud800" as a lone surrogate, which UTF-8 cannot carry: the redacted value was written with it
    raw and the bundle's encoding crashed the module."""
    redacted = diagnostics.redact(name, text.encode())
    assert b'surrogate-pw' not in redacted and b'mirror\\ud800.example' in redacted


@settings(max_examples=150, deadline=None)
@given(password=st.text(alphabet='abcdefghijklmnopqrstuvwxyz0123456789-._~!$&()*+,;=%@:', min_size=1, max_size=12),
       escaped=st.lists(st.booleans(), min_size=80, max_size=80), layout=st.sampled_from(['element', 'member']))
def test_a_url_credential_spelled_with_escapes_in_a_refused_config_is_hidden(password, escaped, layout):
    """Each character of the URL written as JSON may write it (\\uXXXX, \\/), in a daemon.json that does not parse."""
    url = 'https://user:Zq9%sZq9@mirror.example/v2' % password
    spelled = ''.join(('\\u%04x' % ord(char) if char != '/' else '\\/') if escape else char
                      for char, escape in zip(url, escaped + [False] * len(url)))
    if layout == 'element':
        text = '{\n  "registry-mirrors": [\n    "%s"\n  ],\n  "debug": tru\n}\n' % spelled
    else:
        text = '{\n  "registry-mirrors": ["%s"],\n  "debug": tru\n}\n' % spelled
    redacted = diagnostics.redact('daemon.json', text.encode()).decode()
    # Read as the engine would read it: a password left escaped is still a password.
    decoded = re.sub(r'\\u([0-9a-fA-F]{4})', lambda match: chr(int(match.group(1), 16)), redacted)
    assert 'Zq9' not in decoded, redacted
    assert len(redacted.splitlines()) == len(text.splitlines())
