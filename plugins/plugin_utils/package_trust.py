# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side decisions about where Ascend packages may come from (roles/packages).

The packages run as root on the node, so what decides their content decides what runs as
root. Over plain ``http://`` (or ``https://`` without certificate validation) anyone on the
network path can replace both a package and the ``SHA256SUMS`` beside it; a checksum file from
the same mirror then proves nothing. These functions decide, before anything is downloaded,
whether a mirror may be used, and keep file names from leaving the staging directory.
Pure functions, no Ansible imports.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

SHA256_LINE = re.compile(r'^\s*([0-9a-fA-F]{64})\s+[*]?(\S+)\s*$')
# The BSD tag format, which ``sha256sum --tag`` writes and ``sha256sum --check`` reads: SHA256 (<name>) = <64 hex>.
SHA256_TAG_LINE = re.compile(r'^\s*SHA256 \((.+)\) ?= ?([0-9a-fA-F]{64})\s*$')
# Huawei's package names use letters, digits, '.', '_' and '-' only; '+' is allowed for
# hand-made rebuilds. Anything else (a slash, a blank, a quote, a control character) is not a
# plain file name and could point outside the staging directory or into an installer's argv.
PLAIN_FILE_NAME = re.compile(r'\A[A-Za-z0-9][A-Za-z0-9._+-]*\Z')
MAX_FILE_NAME = 255


def file_name_problem(name):
    """'' when ``name`` is a plain file name that stays in the directory it is joined to,
    else why not (the name is shown escaped, so a control character cannot hide in it)."""
    if not isinstance(name, str):
        return 'the package file name must be a string, got %s' % type(name).__name__
    shown = ascii(name)
    if not name:
        return 'the package file name is empty'
    if '\x00' in name:
        return 'the package file name %s contains a NUL byte' % shown
    if '/' in name or '\\' in name:
        return 'the package file name %s contains a directory separator; give a plain file name' % shown
    if name in ('.', '..'):
        return 'the package file name %s names a directory, not a file' % shown
    if name.startswith('-'):
        return 'the package file name %s starts with "-", which a command would read as an option' % shown
    if len(name) > MAX_FILE_NAME:
        return 'the package file name is longer than %d characters' % MAX_FILE_NAME
    if not PLAIN_FILE_NAME.match(name):
        return ('the package file name %s has characters a Huawei package name never has (only letters, '
                'digits, ".", "_", "-" and "+" are accepted)' % shown)
    return ''


class ChecksumFileError(ValueError):
    """A checksum file that cannot be trusted as a whole; the text is the message (cause and fix)."""


def parse_sha256sums(text, source='the checksum file'):
    """A checksum file -> {file name: lower-case hex}.

    Reads both formats ``sha256sum --check`` reads: ``<64 hex>  <name>`` (``*`` before the name in
    binary mode), as Huawei and ``sha256sum`` write it, and the BSD tag format ``SHA256 (<name>) =
    <64 hex>`` (``sha256sum --tag``). Names are reduced to their last path part (a list made with
    ``sha256sum dir/*``); other lines are ignored, as ``sha256sum --check`` does with ``--warn`` off.

    A file that gives one name two different checksums is refused (ChecksumFileError naming
    ``source``, the file and both lines): ``sha256sum --check`` fails it, and taking either line
    would let the last one written decide what runs as root.
    """
    sums = {}
    if not text:
        return sums
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    seen = {}
    for number, line in enumerate(str(text).lstrip('\ufeff').splitlines(), 1):
        match = SHA256_LINE.match(line)
        if match:
            digest, name = match.group(1), match.group(2)
        else:
            match = SHA256_TAG_LINE.match(line)
            if not match:
                continue
            name, digest = match.group(1), match.group(2)
        name, digest = name.rsplit('/', 1)[-1], digest.lower()
        if name in sums and sums[name] != digest:
            raise ChecksumFileError(
                '%s gives %s two different sha256: line %d has %s, line %d has %s (sha256sum --check fails such a '
                'file, and either line may be the forged one). Fix: keep only the line with the sha256 Huawei '
                'publishes for that file (download the checksum list again from Huawei)'
                % (source, ascii(name), seen[name], sums[name], number, digest))
        sums[name] = digest
        seen.setdefault(name, number)
    return sums


def redact_url(url):
    """The URL with any ``user:password@`` removed, fit for a message."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return '<unparsable URL>'
    if parts.username is None and parts.password is None and '@' not in parts.netloc:
        return url
    host = parts.netloc.rsplit('@', 1)[-1]
    return urlunsplit((parts.scheme, '<credentials removed>@' + host, parts.path, parts.query, parts.fragment))


def _valid_sha256(value):
    return isinstance(value, str) and re.match(r'^[0-9a-fA-F]{64}$', value.strip()) is not None


def mirror_trust(url, file_names, pinned=None, allow_insecure=False, validate_certs=True,
                 username='', password=''):
    """Decide whether the packages ``file_names`` may be taken from the mirror ``url``.

    Returns a dict:
      refused      True when the mirror must not be used
      cause, fix   why (and what to do) when refused
      warning      a text to show when the mirror is used but trust rests on it alone, else ''
      display_url  ``url`` without credentials
      fetch_sums   whether the mirror's checksum file is needed (False when every package is pinned)
      unpinned     the file names without a checksum in ``pinned``
    """
    pinned = pinned or {}
    display_url = redact_url(url) if isinstance(url, str) else '<not a string>'
    result = {'refused': False, 'cause': '', 'fix': '', 'warning': '', 'display_url': display_url,
              'fetch_sums': True, 'unpinned': []}

    def refuse(cause, fix):
        result.update(refused=True, cause=cause, fix=fix)
        return result

    if not isinstance(url, str) or not url.strip():
        return refuse('packages_mirror_url is empty', 'set packages_mirror_url or packages_source_dir')
    try:
        parts = urlsplit(url.strip())
        # Reading the port validates it; a bad one raises ValueError here rather than later.
        parts.port  # pylint: disable=pointless-statement
    except ValueError as error:
        return refuse('packages_mirror_url %s is not a valid URL (%s)' % (display_url, error),
                      'set packages_mirror_url to http(s)://<host>[:<port>]/<path>')
    scheme = parts.scheme.lower()
    if scheme not in ('http', 'https') or not parts.hostname:
        return refuse('packages_mirror_url %s is not an http:// or https:// URL' % display_url,
                      'set packages_mirror_url to http(s)://<host>[:<port>]/<path>, or use packages_source_dir '
                      'for a directory on the controller')
    if '@' in parts.netloc:
        return refuse('packages_mirror_url %s carries credentials in the URL, where logs, messages and the '
                      'process list would show them' % display_url,
                      'remove them from the URL and set packages_mirror_username and packages_mirror_password '
                      '(kept out of the output) instead')
    if username and not password:
        return refuse('packages_mirror_username is set but packages_mirror_password is empty',
                      'set both packages_mirror_username and packages_mirror_password, or neither')
    if password and not username:
        return refuse('packages_mirror_password is set but packages_mirror_username is empty',
                      'set both packages_mirror_username and packages_mirror_password, or neither')

    names = list(file_names or [])
    bad_pins = sorted(name for name, value in pinned.items() if not _valid_sha256(value))
    if bad_pins:
        return refuse('packages_sha256sums has a value that is not a sha256 hex digest for %s' % ', '.join(bad_pins),
                      'give each pinned package its 64-character sha256 as Huawei publishes it')
    unpinned = sorted(set(name for name in names if name not in pinned))
    result['unpinned'] = unpinned
    result['fetch_sums'] = bool(unpinned)

    insecure = scheme == 'http' or not validate_certs
    if insecure:
        how = ('plain http://' if scheme == 'http'
               else 'https:// with packages_mirror_validate_certs=false')
        if scheme == 'http' and username and not allow_insecure:
            return refuse(
                'packages_mirror_url %s is plain http:// and packages_mirror_username is set: the password would '
                'cross the network readable by anyone on the path' % display_url,
                'serve the mirror over https, or (accepting the risk) set packages_mirror_allow_insecure=true')
        if not unpinned:
            return result
        if allow_insecure:
            result['warning'] = (
                'packages from %s are fetched over %s and checked only against the SHA256SUMS of the same '
                'mirror (packages_mirror_allow_insecure=true): anyone on the network path can choose what runs '
                'as root. Pin the checksums in packages_sha256sums or serve the mirror over https'
                % (display_url, how))
            return result
        return refuse(
            'packages_mirror_url %s is %s and no checksum is pinned for %s: the SHA256SUMS of the same mirror '
            'would be the only proof of what runs as root, and anyone on the network path can change both'
            % (display_url, how, ', '.join(unpinned)),
            'serve the mirror over https with a valid certificate, or pin the sha256 Huawei publishes for every '
            'package in packages_sha256sums, or (accepting the risk) set packages_mirror_allow_insecure=true')
    if unpinned:
        result['warning'] = (
            'the checksums of %s come from the same mirror as the packages (%s): the mirror alone decides what '
            'runs as root. Pin the sha256 Huawei publishes in packages_sha256sums to check the mirror too'
            % (', '.join(unpinned), display_url))
    return result
