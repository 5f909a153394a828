# -*- coding: utf-8 -*-
"""The stamp a config module leaves: it vouches for exactly one config text and one request."""

import hashlib

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_stamp

hypothesis = pytest.importorskip('hypothesis')
from hypothesis import given, strategies as st  # noqa: E402

OPTIONS = {'path': '/etc/containerd/config.toml', 'name': 'ascend',
           'binary_name': '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime',
           'default': True, 'config_version': None, 'allow_runc_rewrite': False}
NAMES = config_stamp.CONTAINERD_RUNTIME_OPTIONS
EDITOR = config_stamp.text_sha1('def add_runtime(): pass\n')


def _entry(text, stamp):
    return {'sha1': config_stamp.text_sha1(text), 'mode': '0644', 'uid': 0, 'gid': 0,
            'stamp_sha1': hashlib.sha1(stamp).hexdigest()}


def _fingerprint(options=None, editor=EDITOR):
    return config_stamp.request_fingerprint(dict(OPTIONS, **(options or {})), editor, NAMES)


def test_the_stamp_lies_beside_the_config_under_a_name_no_toml_glob_loads():
    assert config_stamp.stamp_path('/etc/containerd/conf.d/99-npu-ascend.toml') == \
        '/etc/containerd/conf.d/.99-npu-ascend.toml.npu_ascend.converged'
    assert not config_stamp.stamp_path('/etc/containerd/config.toml').endswith('.toml')


def test_a_stamp_vouches_for_the_text_and_request_it_names():
    text = 'version = 2\n'
    stamp = config_stamp.stamp_bytes(config_stamp.text_sha1(text), _fingerprint())
    assert config_stamp.vouches(_entry(text, stamp), _fingerprint())


@pytest.mark.parametrize('entry', [None, {}, {'sha1': 'a', 'mode': '0644', 'uid': 0, 'gid': 0}])
def test_no_stamp_vouches_for_nothing(entry):
    assert not config_stamp.vouches(entry, _fingerprint())


def test_every_option_the_stamp_names_must_be_given():
    with pytest.raises(KeyError):
        config_stamp.request_fingerprint({'path': '/etc/containerd/config.toml'}, EDITOR, NAMES)


@given(text=st.text(max_size=200), edit=st.text(min_size=1, max_size=20), at=st.integers(min_value=0, max_value=200))
def test_an_edit_of_the_config_since_is_never_vouched_for(text, edit, at):
    stamp = config_stamp.stamp_bytes(config_stamp.text_sha1(text), _fingerprint())
    edited = text[:at] + edit + text[at:]
    assert config_stamp.vouches(_entry(edited, stamp), _fingerprint()) == (edited == text)


@given(option=st.sampled_from(NAMES),
       value=st.one_of(st.none(), st.booleans(), st.integers(min_value=1, max_value=4), st.text(max_size=30)))
def test_another_request_is_never_vouched_for(option, value):
    text = 'version = 3\n'
    stamp = config_stamp.stamp_bytes(config_stamp.text_sha1(text), _fingerprint())
    asked = _fingerprint({option: value})
    same = type(value) is type(OPTIONS[option]) and value == OPTIONS[option]
    assert config_stamp.vouches(_entry(text, stamp), asked) == same


def test_another_editor_is_never_vouched_for():
    text = 'version = 2\n'
    stamp = config_stamp.stamp_bytes(config_stamp.text_sha1(text), _fingerprint())
    upgraded = config_stamp.text_sha1('def add_runtime(): return 1\n')
    assert not config_stamp.vouches(_entry(text, stamp), _fingerprint(editor=upgraded))
