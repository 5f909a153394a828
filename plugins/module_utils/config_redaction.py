# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hide the credentials in the text of an engine config (daemon.json, containerd's TOML), kept free of Ansible.

Used on both sides of a ``--diff`` and meant for anything else that shows a whole config file (a
diagnostics bundle). Redaction goes by the file's *structure*, not by words in its text, because a
word list misses what hostile configs use:

* keys spelled with escapes (``"pass\\u0077ord"`` in JSON, ``"pass\\u0077ord"`` as a quoted TOML key):
  the file is parsed, so keys are compared as the engine reads them;
* registry headers (containerd's ``headers``/``header`` tables: ``Authorization = ["Basic ..."]``):
  every header value is hidden;
* credentials in URLs (``https://user:pw@mirror`` in ``registry-mirrors``, Docker's ``proxies``,
  containerd's ``endpoint``): the userinfo of any URL-looking string, anywhere, is hidden.

Only values change (to ``REDACTED``); keys, comments and layout stay, so a diff still shows what
changed. Text that does not parse is redacted line by line, conservatively: any line whose key part
names a credential or holds an escape loses everything after its ``=``/``:``, and URL userinfo goes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

try:
    from collections.abc import MutableMapping
except ImportError:  # pragma: no cover - Python 2 only, which modules here do not support
    MutableMapping = dict

try:
    import tomlkit
except ImportError:  # the line-based redaction still applies
    tomlkit = None

REDACTED = '********'
# Keys whose values are credentials in engine configs (compared in lower case, as parsed): Docker's
# "auths" entries, containerd's registry.configs.<host>.auth tables, mirrors' settings.
SECRET_KEYS = ('auth', 'password', 'passwd', 'secret', 'token', 'identitytoken', 'registrytoken', 'authorization')
# Tables of HTTP headers sent to registries: all their values are hidden (Authorization, cookies, API keys).
HEADER_KEYS = ('headers', 'header', 'httpheaders')
# scheme://userinfo@host: the userinfo goes, scheme and host stay.
_URL_USERINFO = re.compile(r'([A-Za-z][A-Za-z0-9+.-]*://)([^/?#@\s"\'\\]+)@')
_WHITESPACE = ' \t\n\r'
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_JSON_SCALAR = re.compile(r'-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null')
# Line-based fallback: a key part (before the first = or :) and the rest of the line.
_LINE = re.compile(r'^(?P<key>[^=:\n]*?)(?P<sep>\s*[=:]\s*)(?P<value>.*)$')
_SECRET_WORDS = re.compile(r'auth|pass|secret|token|header|cookie|credential|key', re.I)


def redact_url_userinfo(value):
    """``value`` with the userinfo of every ``scheme://user:pw@host`` in it replaced by REDACTED."""
    return _URL_USERINFO.sub(lambda match: match.group(1) + REDACTED + '@', value)


def _is_secret(key):
    return isinstance(key, str) and key.lower() in SECRET_KEYS


def _is_headers(key):
    return isinstance(key, str) and key.lower() in HEADER_KEYS


class _JsonRedactor(object):
    """Walks valid JSON text and collects ``(start, end, replacement)`` for the tokens to hide."""

    def __init__(self, text):
        self.text = text
        self.edits = []

    def _skip(self, position):
        while position < len(self.text) and self.text[position] in _WHITESPACE:
            position += 1
        return position

    def _string(self, position, hide):
        match = _JSON_STRING.match(self.text, position)
        value = json.loads(match.group())
        if hide:
            if value != REDACTED:
                self.edits.append((match.start(), match.end(), json.dumps(REDACTED)))
        else:
            redacted = redact_url_userinfo(value)
            if redacted != value:
                self.edits.append((match.start(), match.end(), json.dumps(redacted, ensure_ascii=False)))
        return match.end(), value

    def value(self, position, hide=False, headers=False):
        """Index past the value at ``position``; ``hide`` hides every scalar in it, ``headers`` every member value."""
        position = self._skip(position)
        opener = self.text[position]
        if opener == '{':
            cursor = self._skip(position + 1)
            while self.text[cursor] != '}':
                key_end, key = self._string(cursor, False)
                colon = self._skip(key_end)
                value_start = self._skip(colon + 1)
                is_object = self.text[value_start] == '{'
                secret = hide or headers or (_is_secret(key) and not is_object)
                cursor = self._skip(self.value(value_start, secret, _is_headers(key) and is_object))
                if self.text[cursor] == ',':
                    cursor = self._skip(cursor + 1)
            return cursor + 1
        if opener == '[':
            cursor = self._skip(position + 1)
            while self.text[cursor] != ']':
                cursor = self._skip(self.value(cursor, hide))
                if self.text[cursor] == ',':
                    cursor = self._skip(cursor + 1)
            return cursor + 1
        if opener == '"':
            return self._string(position, hide)[0]
        match = _JSON_SCALAR.match(self.text, position)
        if hide and match.group() != 'null':
            self.edits.append((match.start(), match.end(), json.dumps(REDACTED)))
        return match.end()


def _redact_json(text):
    json.loads(text)  # ValueError (and RecursionError) send the text to the line-based redaction
    if not text.strip(_WHITESPACE):
        return text
    walker = _JsonRedactor(text)
    walker.value(0)
    for start, end, replacement in reversed(walker.edits):
        text = text[:start] + replacement + text[end:]
    return text


def _toml_hide(container, key, item):
    """Replace every scalar of ``item`` (a value, an array, a table) by REDACTED."""
    if isinstance(item, MutableMapping):
        for child in list(item.keys()):
            _toml_hide(item, child, item[child])
    elif isinstance(item, list):
        for index in range(len(item)):
            _toml_hide(item, index, item[index])
    elif getattr(item, 'unwrap', lambda: item)() != REDACTED:
        container[key] = REDACTED


def _toml_walk(container, key, item):
    if isinstance(item, MutableMapping):
        for child in list(item.keys()):
            value = item[child]
            if _is_headers(child) and isinstance(value, MutableMapping):
                for header in list(value.keys()):
                    _toml_hide(value, header, value[header])
            elif _is_secret(child) and not isinstance(value, MutableMapping):
                _toml_hide(item, child, value)
            else:
                _toml_walk(item, child, value)
    elif isinstance(item, list):
        for index in range(len(item)):
            _toml_walk(item, index, item[index])
    elif isinstance(item, str):
        redacted = redact_url_userinfo(str(item))
        if redacted != str(item):
            container[key] = redacted


def _redact_toml(text):
    if tomlkit is None:
        raise ValueError('tomlkit is not importable')
    document = tomlkit.parse(text)
    _toml_walk(None, None, document)
    return tomlkit.dumps(document)


def _redact_lines(text):
    """The conservative redaction of text that does not parse: whole values of suspect lines go."""
    lines = []
    for line in text.splitlines(True):
        body = line.rstrip('\r\n')
        ending = line[len(body):]
        match = _LINE.match(body)
        if match and (_SECRET_WORDS.search(match.group('key')) or '\\' in match.group('key')) and match.group('value'):
            body = match.group('key') + match.group('sep') + '"%s"' % REDACTED
        lines.append(redact_url_userinfo(body) + ending)
    return ''.join(lines)


def redact_config_text(text, kind=None):
    """``text`` (a whole config file) with its credentials replaced by REDACTED; ``kind`` is 'json' or 'toml',
    or None to guess (JSON when it parses as JSON, else TOML).

    A text that does not parse as ``kind`` gets the line-based redaction. None and '' pass through.
    """
    if not text:
        return text
    if kind is None:
        try:
            json.loads(text)
            kind = 'json'
        except ValueError:
            kind = 'toml'
    parse = {'json': _redact_json, 'toml': _redact_toml}[kind]
    try:
        return parse(text)
    except Exception:  # any parser or editor failure: never show the text unredacted
        return _redact_lines(text)
