"""Every `that:` item of an assert in the collection's and the tests' playbooks is a string.

A condition containing ': ' that is not quoted is a YAML mapping, not a condition; ansible-core
then refuses the task, or (in a list) evaluates something else than what was written.
"""
import os

import pytest
import yaml

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
SEARCHED = ('roles', 'playbooks', 'molecule', 'tests/faults', 'sandbox/kubelet')


def _yaml_files():
    for top in SEARCHED:
        for directory, _subdirs, names in os.walk(os.path.join(REPO_ROOT, top)):
            for name in names:
                if name.endswith(('.yml', '.yaml')) and not name.endswith('.j2'):
                    yield os.path.join(directory, name)


def _asserts(node):
    if isinstance(node, dict):
        for key in ('ansible.builtin.assert', 'assert'):
            if isinstance(node.get(key), dict) and 'that' in node[key]:
                yield node.get('name', '(unnamed)'), node[key]['that']
        for value in node.values():
            yield from _asserts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _asserts(item)


def _load(path):
    with open(path) as handle:
        try:
            return list(yaml.safe_load_all(handle))
        except yaml.YAMLError as error:
            pytest.fail('%s is not valid YAML: %s' % (os.path.relpath(path, REPO_ROOT), error))


@pytest.mark.parametrize('path', sorted(_yaml_files()), ids=lambda path: os.path.relpath(path, REPO_ROOT))
def test_every_assert_condition_is_a_string(path):
    wrong = []
    for document in _load(path):
        for name, that in _asserts(document):
            items = that if isinstance(that, list) else [that]
            wrong += ['%s: %r' % (name, item) for item in items if not isinstance(item, str)]
    assert not wrong, 'conditions that YAML read as something else (quote them): %s' % wrong
