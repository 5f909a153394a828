# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stamp a config module leaves beside a config it made as wanted. No Ansible imports.

A converged node should cost the probe, not a module that parses its containerd config to find
nothing to change. So ``containerd_runtime`` (state=present) leaves, beside the config, a stamp
naming the SHA-1 of the bytes it left there and a fingerprint of the request that produced them:
the options that decide the file's content and the source of the editor that wrote it. The probe
(``ascend_facts`` option ``files``) reports the SHA-1 of the config and of its stamp; the stamp
vouches for the config only when its bytes are exactly what ``stamp_bytes`` makes of the config's
current SHA-1 and the request the role would make now.

What the stamp cannot vouch for is simply run again: a config edited since (another SHA-1), other
options, an upgraded editor (other source), a missing or damaged stamp. Nothing is ever skipped on
the stamp's word alone.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os

STAMP_SUFFIX = '.npu_ascend.converged'
# Bumped when the stamp's bytes change meaning; part of every stamp.
STAMP_FORMAT = 1
# containerd_runtime's options that decide what state=present leaves in the file, and its editor.
CONTAINERD_RUNTIME_OPTIONS = ('path', 'name', 'binary_name', 'default', 'config_version', 'allow_runc_rewrite')
# The files of that editor (runtime_config/), in the order their sources are hashed together.
CONTAINERD_EDITOR = ('toml_editor.py', 'containerd_layout.py', 'undo_record.py', 'containerd_config.py')


def stamp_path(config_path):
    """A hidden file beside the config; its name does not end in ``.toml`` (a conf.d glob never loads it)."""
    directory, base = os.path.split(config_path)
    return os.path.join(directory, '.' + base + STAMP_SUFFIX)


def text_sha1(text):
    """SHA-1 of a text as UTF-8: a config as the modules write it (what the probe hashes), or an
    editor's source (the module reads its own with ``inspect.getsource``, the controller the file)."""
    return hashlib.sha1(text.encode('utf-8')).hexdigest()


def _canonical(value):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    return str(value)


def request_fingerprint(options, editor_sha1, names):
    """One string for the options ``names`` (each one must be given) and the editor that applies them."""
    canonical = dict((name, _canonical(options[name])) for name in names)
    payload = json.dumps({'editor': editor_sha1, 'options': canonical}, sort_keys=True, separators=(',', ':'))
    return hashlib.sha1(payload.encode('utf-8')).hexdigest()


def stamp_bytes(config_sha1, fingerprint):
    return (json.dumps({'config_sha1': config_sha1, 'format': STAMP_FORMAT, 'request': fingerprint},
                       sort_keys=True) + '\n').encode('utf-8')


def vouches(file_state, fingerprint):
    """Whether the probe's entry for a config shows it exactly as a run of ``fingerprint`` left it.

    ``file_state`` is the config's entry in ``ansible_facts.ascend.files``: ``{sha1, ..., stamp_sha1}``
    (``stamp_sha1`` only where a stamp is), or None for a config that is not a regular file.
    """
    if not file_state or not file_state.get('stamp_sha1'):
        return False
    return file_state['stamp_sha1'] == hashlib.sha1(stamp_bytes(file_state.get('sha1'), fingerprint)).hexdigest()
