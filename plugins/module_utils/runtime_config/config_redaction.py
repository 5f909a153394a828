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
  containerd's ``endpoint``): the userinfo of any URL-looking string, anywhere, is hidden, up to the
  *last* ``@`` of the authority as Go's ``net/url`` (dockerd, containerd) splits it, so a password
  holding ``@`` goes whole; a proxy without a scheme (``user:pw@proxy:3128``, which Go's HTTP client
  reads as ``http://user:pw@proxy:3128``) loses its userinfo too, as does any ``user:pw@host`` value.

Only values change (to ``REDACTED``); keys, comments and layout stay, so a diff still shows what
changed. Text that does not parse (a config the engine refused, say with a table given twice) is
redacted line by line, conservatively: a line whose key names a credential or holds an escape, whose
value holds one (an inline table), that follows such a key alone on its line, or that sits in a
``headers`` table, loses its value, *with every further line of it* (an array, an inline table or a
multi-line string spread over lines; those lines keep their number, so an engine's "line N" still
points right); URL userinfo goes everywhere, also in strings spelled with escapes.
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
# scheme://userinfo@host: the userinfo goes, scheme and host stay. The userinfo runs to the last @ before the
# path, query or fragment, as Go's net/url reads it (a password may hold @ and quotes). A scheme starts where a
# run of scheme characters starts (the lookbehind): trying it at every letter of a long word took quadratic time.
_URL_USERINFO = re.compile(r'(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*://)([^/?#\s]*)@')
# userinfo@host with no scheme: a proxy's (any userinfo) or, in any value, a user:password one (but not an image
# named by tag and digest, busybox:1.36@sha256:<hex>).
_BARE_PROXY_USERINFO = re.compile(r'\A(\s*)([^/?#\s]*)@')
_BARE_USERINFO = re.compile(r'\A(\s*)([^/?#\s:@]*:[^/?#\s]*)@(?!sha\d+:[0-9a-fA-F]{32,})')
_WHITESPACE = ' \t\n\r'
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_JSON_SCALAR = re.compile(r'-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null')
# Line-based fallback: a key part (up to the first = or : outside quotes) and the rest of the line.
_LINE = re.compile(r'^(?P<key>(?:"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|[^=:"\'\n])*?)(?P<sep>\s*[=:]\s*)(?P<value>.*)$')
_SECRET_WORDS = re.compile(r'auth|pass|secret|token|header|cookie|credential|key', re.I)
# A line that is only a key (its value on the next line, as JSON allows), with or without its separator.
_KEY_ALONE = re.compile(r'^\s*(?P<key>"(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_.-]+)\s*[=:]?\s*$')
# A TOML table header, [a.b] or [[a.b]].
_TABLE = re.compile(r'^\s*\[\[?(?P<name>[^\[\]]*)\]\]?\s*(?:#.*)?$')
# Quoted strings within a line (basic strings with their escapes, literal strings), read for URL userinfo.
_BASIC_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL_STRING = re.compile(r"'[^'\n]*'")
_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)', re.S)
_ESCAPED = {'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r', 'e': '\x1b'}


def redact_url_userinfo(value, proxy=False):
    """``value`` with the userinfo of every ``scheme://user:pw@host`` in it replaced by REDACTED, and that of a
    ``user:pw@host`` value without a scheme; with ``proxy`` (a proxy setting) any ``userinfo@host``'s."""
    value = _URL_USERINFO.sub(lambda match: match.group(1) + REDACTED + '@', value)
    bare = _BARE_PROXY_USERINFO if proxy else _BARE_USERINFO
    return bare.sub(lambda match: match.group(1) + REDACTED + '@', value)


def _json_string(value):
    """``value`` as a JSON string; non-ASCII stays readable, unless the value holds a lone surrogate (``"\\ud800"``
    decodes to one), which UTF-8 cannot carry: then every such character is escaped, as JSON allows."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


def _is_proxy(key):
    return isinstance(key, str) and 'proxy' in key.lower()


def _is_secret(key):
    return isinstance(key, str) and key.lower() in SECRET_KEYS


def _is_auth_table(key):
    """containerd's ``registry.configs.<host>.auth`` table: its members are walked (the username stays readable);
    any other credential key holding a table has all of it hidden."""
    return key.lower() == 'auth'


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

    def _string(self, position, hide, proxy=False):
        match = _JSON_STRING.match(self.text, position)
        value = json.loads(match.group())
        if hide:
            if value != REDACTED:
                self.edits.append((match.start(), match.end(), json.dumps(REDACTED)))
        else:
            redacted = redact_url_userinfo(value, proxy)
            if redacted != value:
                self.edits.append((match.start(), match.end(), _json_string(redacted)))
        return match.end(), value

    def value(self, position, hide=False, headers=False, proxy=False):
        """Index past the value at ``position``; ``hide`` hides every scalar in it, ``headers`` every member value,
        ``proxy`` reads its strings as proxies (a userinfo without a scheme goes too)."""
        position = self._skip(position)
        opener = self.text[position]
        if opener == '{':
            cursor = self._skip(position + 1)
            while self.text[cursor] != '}':
                key_end, key = self._string(cursor, False)
                colon = self._skip(key_end)
                value_start = self._skip(colon + 1)
                is_object = self.text[value_start] == '{'
                secret = hide or headers or (_is_secret(key) and not (is_object and _is_auth_table(key)))
                cursor = self._skip(self.value(value_start, secret, _is_headers(key) and is_object,
                                               proxy or _is_proxy(key)))
                if self.text[cursor] == ',':
                    cursor = self._skip(cursor + 1)
            return cursor + 1
        if opener == '[':
            cursor = self._skip(position + 1)
            while self.text[cursor] != ']':
                cursor = self._skip(self.value(cursor, hide, proxy=proxy))
                if self.text[cursor] == ',':
                    cursor = self._skip(cursor + 1)
            return cursor + 1
        if opener == '"':
            return self._string(position, hide, proxy)[0]
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


def _toml_walk(container, key, item, proxy=False):
    if isinstance(item, MutableMapping):
        for child in list(item.keys()):
            value = item[child]
            if _is_headers(child) and isinstance(value, MutableMapping):
                for header in list(value.keys()):
                    _toml_hide(value, header, value[header])
            elif _is_secret(child) and not (isinstance(value, MutableMapping) and _is_auth_table(child)):
                _toml_hide(item, child, value)
            else:
                _toml_walk(item, child, value, proxy or _is_proxy(child))
    elif isinstance(item, list):
        for index in range(len(item)):
            _toml_walk(item, index, item[index], proxy)
    elif isinstance(item, str):
        redacted = redact_url_userinfo(str(item), proxy)
        if redacted != str(item):
            container[key] = redacted


def _redact_toml(text):
    if tomlkit is None:
        raise ValueError('tomlkit is not importable')
    document = tomlkit.parse(text)
    _toml_walk(None, None, document)
    return _redact_toml_comments(tomlkit.dumps(document))


def _redact_toml_comments(text):
    """The comments of valid TOML, which the structure does not see: an operator's old password commented out,
    a header kept for reference, a URL noted beside a line. A comment on the line of a key that looks like a
    credential or within its value, or in a headers table, goes whole; any other loses what the line-based
    redaction hides (``# old: password = "..."``, URL userinfo)."""
    lines = []
    state = (0, None)
    in_headers = secret_value = False
    for line in text.splitlines(True):
        body = line.rstrip('\r\n')
        ending = line[len(body):]
        if not _is_open(state):
            table = _TABLE.match(body)
            if table:
                in_headers = _headers_table(table.group('name'))
            statement = _LINE.match(body)
            secret_value = bool(statement) and _suspect_key(statement.group('key'))
        depth, quote, comment = _scan(body, state)
        state = (depth, quote)
        if comment is not None:
            code, note = body[:comment], body[comment + 1:]
            if in_headers or secret_value:
                note = ' ' + REDACTED if note.strip() else note
            else:
                note = _redact_lines(note)
            body = code + '#' + note
        lines.append(body + ending)
    return ''.join(lines)


def _unescape(body):
    """The text of a basic string's body (JSON's or TOML's escapes; an unknown escape stands for its character)."""
    def one(match):
        code = match.group(1)
        if code[0] in 'uU' and len(code) > 1:
            number = int(code[1:], 16)
            return chr(number) if number <= 0x10FFFF else ''
        return _ESCAPED.get(code, code)
    return _ESCAPE.sub(one, body)


def _redact_raw(text, proxy=False):
    """URL userinfo out of a piece of text that did not parse: in each quoted string as the engine would read it
    (escapes decoded, so ``\\u0040`` or ``\\/`` cannot hide one), then in the text as it stands."""
    def basic(match):
        value = _unescape(match.group()[1:-1])
        redacted = redact_url_userinfo(value, proxy)
        return match.group() if redacted == value else _json_string(redacted)

    def literal(match):
        return "'%s'" % redact_url_userinfo(match.group()[1:-1], proxy)
    return redact_url_userinfo(_LITERAL_STRING.sub(literal, _BASIC_STRING.sub(basic, text)), proxy)


def _suspect_key(key):
    """A key that names a credential, or is spelled with an escape (which may hide one)."""
    return bool(_SECRET_WORDS.search(key)) or '\\' in key


def _names_a_secret(text):
    """A value or a line that names a credential (an inline table's key), escapes decoded."""
    return bool(_SECRET_WORDS.search(_unescape(text)))


def _headers_table(name):
    """Whether a TOML table header names a headers table (or one within): every value in it is hidden."""
    parts = re.findall(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|[^.\s]+', name)
    return any('\\' in part or _is_headers(part.strip('"\'')) for part in parts)


def _scan(text, state):
    """Where a value spread over lines stands after ``text``: (bracket depth, open string delimiter, index of the
    ``#`` that starts a comment or None), from ``state`` (depth, delimiter) at its start.

    Brackets count outside strings; basic strings (" and \"\"\") know their escapes, literal ones (' and \'\'\')
    do not; a # outside strings starts a comment. A quote left open at the end of a line stays open (the text
    does not parse anyway, and whatever follows may be the rest of the secret).
    """
    depth, quote = state
    position = 0
    while position < len(text):
        if quote:
            if quote[0] == '"' and text[position] == '\\':
                position += 2
                continue
            if text.startswith(quote, position):
                position += len(quote)
                quote = None
                continue
            position += 1
            continue
        char = text[position]
        if char == '#':
            return depth, quote, position
        if char in '"\'':
            quote = char * 3 if text.startswith(char * 3, position) else char
            position += len(quote)
            continue
        if char in '[{':
            depth += 1
        elif char in ']}':
            depth = max(0, depth - 1)
        position += 1
    return depth, quote, None


def _open_after(text, state):
    return _scan(text, state)[:2]


def _is_open(state):
    return state[0] > 0 or state[1] is not None


def _goes_on(value):
    """The state of a value that goes on past the line ``value`` starts on, or None when it ends there."""
    state = _open_after(value, (0, None))
    return state if _is_open(state) else None


def _redact_lines(text):
    """The conservative redaction of text that does not parse: whole values of suspect lines go, with every line
    a value spreads over."""
    hidden = '"%s"' % REDACTED
    lines = []
    in_headers = False  # in a TOML [...headers] table
    pending = False  # a suspect key stood alone on the line before: the next value is hidden
    state = None  # (depth, quote) of a hidden value that goes on over the next lines
    for line in text.splitlines(True):
        body = line.rstrip('\r\n')
        ending = line[len(body):]
        indent = body[:len(body) - len(body.lstrip())]
        if state is not None:
            state = _open_after(body, state)
            lines.append(indent + hidden + ending)
            if not _is_open(state):
                state = None
            continue
        if pending and body.strip():
            value = body.strip().lstrip('=:').strip()
            if value:
                pending = False
                state = _goes_on(value)
                lines.append(indent + hidden + ending)
                continue
            lines.append(body + ending)
            continue
        table = _TABLE.match(body)
        if table:
            in_headers = _headers_table(table.group('name'))
            lines.append(_redact_raw(body) + ending)
            continue
        match = _LINE.match(body)
        if match:
            key, value = match.group('key'), match.group('value')
            if in_headers or _suspect_key(key) or _names_a_secret(value):
                if value and _scan(value, (0, None))[2] != 0:  # a value, not nothing or only a comment
                    state = _goes_on(value)
                    body = key + match.group('sep') + hidden
                else:
                    pending = True
                    body = _redact_raw(body)
            else:
                body = _redact_raw(body, _is_proxy(key))
        else:
            alone = _KEY_ALONE.match(body)
            if alone and (in_headers or _suspect_key(alone.group('key'))):
                # A key whose value follows (or an array's string that looks like one: its URL is read too).
                pending = True
                body = _redact_raw(body)
            elif in_headers or _names_a_secret(body):
                # No key of its own (an array's element, a string's line): the whole line goes, and what it opens.
                state = _goes_on(body)
                body = indent + hidden
            else:
                body = _redact_raw(body)
        lines.append(body + ending)
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
