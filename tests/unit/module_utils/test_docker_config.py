# -*- coding: utf-8 -*-
"""docker_config over real-world daemon.json files."""

import glob
import json
import os
import re
from collections import OrderedDict

import pytest
from hypothesis import assume, given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import docker_config

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURES = os.path.join(REPO_ROOT, 'tests', 'fixtures', 'docker')
RUNTIME = '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'
VALID = sorted(os.path.basename(p) for p in glob.glob(os.path.join(FIXTURES, '*.json'))
               if not os.path.basename(p).startswith('invalid-'))


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding='utf-8') as handle:
        return handle.read()


def blank_default(text):
    return re.sub(r'("default-runtime"\s*:\s*)"[^"]*"', r'\1""', text)


def is_subsequence(short, long):
    remaining = iter(long)
    return all(character in remaining for character in short)


def parsed(text):
    return docker_config.parse_config(text)


@pytest.mark.parametrize('name', VALID)
def test_add_keeps_every_other_member_and_absent_restores_bytes(name):
    original = fixture(name)
    new, record = docker_config.add_runtime(original, 'ascend', RUNTIME, True)

    before, after = parsed(original), parsed(new)
    for key, value in before.items():
        if key == 'default-runtime':
            continue
        if key == 'runtimes':
            for runtime, settings in value.items():
                if runtime != 'ascend':
                    assert after['runtimes'][runtime] == settings
            continue
        assert after[key] == value, key
    # Key order of the members that were there is kept.
    assert [k for k in after if k in before] == list(before)
    assert set(after) - set(before) <= {'runtimes', 'default-runtime'}
    assert after['default-runtime'] == 'ascend'
    assert after['runtimes']['ascend']['path'] == RUNTIME

    # Nothing of the original text is lost: it is the new text minus insertions, once the
    # value of default-runtime (owned) is blanked in both.
    assert is_subsequence(blank_default(original), blank_default(new))

    again, record_again = docker_config.add_runtime(new, 'ascend', RUNTIME, True, record)
    assert again == new and record_again == record

    if new != original:
        assert docker_config.remove_runtime(new, 'ascend', record) == original
    else:
        # Registered before (by Huawei's installer): absent still unregisters it.
        # The module records nothing when nothing changed, so absent meets no record.
        assert docker_config.effective_runtime(docker_config.remove_runtime(new, 'ascend', None), 'ascend') == (None, None)


def test_layout_follows_the_file():
    new, _record = docker_config.add_runtime(fixture('mirrors-logs-2space.json'), 'ascend', RUNTIME, True)
    assert '\n  "runtimes": {\n    "ascend": {\n      "path": "%s",\n      "runtimeArgs": []\n    }\n  },\n' % RUNTIME in new
    assert new.endswith('\n  "default-runtime": "ascend"\n}\n')
    tabs, _record = docker_config.add_runtime(fixture('tabs.json'), 'ascend', RUNTIME, True)
    assert '\n\t"runtimes": {\n\t\t"ascend": {\n' in tabs
    empty, _record = docker_config.add_runtime('{}\n', 'ascend', RUNTIME, False)
    assert empty == '{\n    "runtimes": {\n        "ascend": {\n            "path": "%s",\n            "runtimeArgs": []\n        }\n    }\n}\n' % RUNTIME
    one_line, _record = docker_config.add_runtime(fixture('compact-one-line.json'), 'ascend', RUNTIME, True)
    assert one_line.startswith('{"log-driver":"journald","log-opts":{"tag":"{{.Name}}"},"runtimes":{')
    json.loads(one_line)


def test_previous_default_comes_back():
    original = fixture('nvidia-ctk.json')
    new, record = docker_config.add_runtime(original, 'ascend', RUNTIME, True)
    assert record['previous_default'] == '"nvidia"'
    not_default, record = docker_config.add_runtime(new, 'ascend', RUNTIME, False, record)
    assert parsed(not_default)['default-runtime'] == 'nvidia'
    assert parsed(not_default)['runtimes']['ascend']['path'] == RUNTIME
    assert docker_config.remove_runtime(not_default, 'ascend', record) == original


def test_huawei_installed_file_is_already_in_place_and_absent_removes_both():
    original = fixture('huawei-installed.json')
    new, _record = docker_config.add_runtime(original, 'ascend', RUNTIME, True)
    assert new == original
    removed = docker_config.remove_runtime(original, 'ascend')
    assert parsed(removed) == OrderedDict([('runtimes', OrderedDict())])


def test_existing_runtime_keeps_its_arguments_and_gets_its_path_corrected():
    text = '{\n  "runtimes": {\n    "ascend": {"path": "/old/path", "runtimeArgs": ["--debug"]}\n  }\n}\n'
    new, _record = docker_config.add_runtime(text, 'ascend', RUNTIME, False)
    assert new == text.replace('/old/path', RUNTIME)


def test_not_default_removes_a_default_it_did_not_set():
    new, _record = docker_config.add_runtime(fixture('huawei-installed.json'), 'ascend', RUNTIME, False)
    assert 'default-runtime' not in parsed(new)
    json.loads(new)


@pytest.mark.parametrize('name, message', [
    ('invalid-unclosed.json', 'line 5 column 1'),
    ('invalid-top-level-array.json', 'not an object'),
])
def test_invalid_input_is_refused(name, message):
    with pytest.raises(docker_config.DockerConfigError, match=message):
        docker_config.add_runtime(fixture(name), 'ascend', RUNTIME, True)
    with pytest.raises(docker_config.DockerConfigError, match=message):
        docker_config.remove_runtime(fixture(name), 'ascend')


def test_wrong_types_are_refused():
    with pytest.raises(docker_config.DockerConfigError, match='"runtimes" is a list'):
        docker_config.add_runtime('{"runtimes": []}', 'ascend', RUNTIME, True)
    with pytest.raises(docker_config.DockerConfigError, match='"runtimes.ascend" is a str'):
        docker_config.add_runtime('{"runtimes": {"ascend": "x"}}', 'ascend', RUNTIME, True)


def test_strings_with_braces_and_escapes_do_not_confuse_the_scanner():
    text = '{\n  "labels": ["a}b", "q\\"{"],\n  "runtimes": {"x": {"path": "/p\\\\}"}}\n}\n'
    new, record = docker_config.add_runtime(text, 'ascend', RUNTIME, True)
    assert parsed(new)['labels'] == ['a}b', 'q"{']
    assert parsed(new)['runtimes']['x'] == {'path': '/p\\}'}
    assert docker_config.remove_runtime(new, 'ascend', record) == text


# Property-based: generated daemon.json files of every layout json.dumps can produce.
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 6, 10 ** 6),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                       max_leaves=8)
_runtime = st.fixed_dictionaries({'path': st.sampled_from(['/usr/bin/nvidia-container-runtime', RUNTIME, '/opt/old'])},
                                 optional={'runtimeArgs': st.lists(st.text(max_size=5), max_size=2)})
_documents = st.fixed_dictionaries({}, optional={
    'runtimes': st.dictionaries(st.sampled_from(['nvidia', 'ascend', 'crun']), _runtime, max_size=3),
    'default-runtime': st.sampled_from(['runc', 'nvidia', 'ascend']),
    'log-driver': st.text(max_size=8),
    'registry-mirrors': st.lists(st.text(max_size=8), max_size=2),
    'log-opts': st.dictionaries(st.text(max_size=6), _values, max_size=3),
    'debug': st.booleans(),
})
_layouts = st.sampled_from([
    dict(indent=None), dict(indent=2), dict(indent=4), dict(indent='\t'), dict(indent=0),
    dict(indent=None, separators=(',', ':')), dict(indent=3, separators=(',', ' : ')),
])


def _render(document, layout, trailer):
    return json.dumps(document, ensure_ascii=False, **layout) + trailer


@settings(max_examples=80, deadline=None)
@given(document=_documents, layout=_layouts, trailer=st.sampled_from(['', '\n', '\n\n', '  \n']),
       make_default=st.booleans())
def test_generated_configs_round_trip_present_absent_byte_for_byte(document, layout, trailer, make_default):
    original = _render(document, layout, trailer)
    new, record = docker_config.add_runtime(original, 'ascend', RUNTIME, make_default)
    after = parsed(new)
    assert after['runtimes']['ascend']['path'] == RUNTIME
    assert (after.get('default-runtime') == 'ascend') == make_default
    for key, value in document.items():
        if key not in ('runtimes', 'default-runtime'):
            assert after[key] == value
    # present is idempotent
    again, record_again = docker_config.add_runtime(new, 'ascend', RUNTIME, make_default, record)
    assert again == new and record_again == record
    if new != original:
        assert docker_config.remove_runtime(new, 'ascend', record) == original


@settings(max_examples=80, deadline=None)
@given(document=_documents, layout=_layouts, make_default=st.booleans(), edit=st.text(max_size=6))
def test_after_an_edit_by_someone_else_absent_undoes_only_the_modules_change(document, layout, make_default, edit):
    original = _render(document, layout, '\n')
    new, record = docker_config.add_runtime(original, 'ascend', RUNTIME, make_default)
    assume(new != original)
    # Another tool adds a member after the module wrote the file: the whole-text shortcut is off.
    edited = new.replace('{', '{"zz-other": %s, ' % json.dumps(edit), 1) if parsed(new) else new
    # Compared as plain dicts: a default put back after such an edit goes after the other members.
    removed = json.loads(docker_config.remove_runtime(edited, 'ascend', record) or '{}')
    assert removed.pop('zz-other') == edit
    assert removed == json.loads(original)


@settings(max_examples=80, deadline=None)
@given(text=st.one_of(st.text(max_size=40), st.text(alphabet='{}[]":,. \n0123456789eE-+tfnaulrsNI\\', max_size=40)))
def test_any_text_is_edited_or_refused_cleanly(text):
    try:
        new, record = docker_config.add_runtime(text, 'ascend', RUNTIME, True)
    except docker_config.DockerConfigError:
        return
    assert parsed(new)['runtimes']['ascend']['path'] == RUNTIME
    if new != text:
        assert docker_config.remove_runtime(new, 'ascend', record) == text
