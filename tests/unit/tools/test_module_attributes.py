# -*- coding: utf-8 -*-
"""Every module documents the attributes check_mode, diff_mode, idempotent and platform (through
the npu.ascend.attributes doc fragment), and what it claims for check mode agrees with the
module's own supports_check_mode."""

import json
import os
import re
import subprocess
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODULES_DIR = os.path.join(REPO_ROOT, 'plugins', 'modules')
ACTIONS_DIR = os.path.join(REPO_ROOT, 'plugins', 'action')
MODULES = sorted(name[:-3] for name in os.listdir(MODULES_DIR) if name.endswith('.py') and not name.startswith('_'))
_SUPPORT = ('full', 'partial', 'none', 'N/A')


@pytest.fixture(scope='module')
def docs():
    completed = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'ansible-doc'), '-t', 'module', '--json']
        + ['npu.ascend.%s' % name for name in MODULES],
        env=dict(os.environ, LC_ALL='C.UTF-8', ANSIBLE_NOCOLOR='1',
                 ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, '.cache', 'collections')),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert completed.returncode == 0, completed.stderr
    return dict((name.split('.')[-1], entry['doc']) for name, entry in json.loads(completed.stdout).items())


@pytest.mark.parametrize('module', MODULES)
def test_the_module_documents_every_attribute(docs, module):
    attributes = docs[module].get('attributes') or {}
    for attribute in ('check_mode', 'diff_mode', 'idempotent', 'platform'):
        assert attribute in attributes, '%s documents no %s attribute' % (module, attribute)
        assert attributes[attribute].get('description'), (module, attribute)
        assert attributes[attribute].get('support') in _SUPPORT, (module, attribute, attributes[attribute])
    # Anything short of full says what is missing.
    for attribute, value in attributes.items():
        if value.get('support') == 'partial':
            assert value.get('details'), '%s: %s is partial without details' % (module, attribute)


@pytest.mark.parametrize('module', MODULES)
def test_the_check_mode_claim_matches_the_module(docs, module):
    with open(os.path.join(MODULES_DIR, module + '.py'), encoding='utf-8') as handle:
        source = handle.read()
    # A module that is an action plugin (its file under plugins/modules holds only the docs) says it there.
    action = os.path.join(ACTIONS_DIR, module + '.py')
    if os.path.exists(action):
        with open(action, encoding='utf-8') as handle:
            source += handle.read()
    supports_check_mode = re.search(r'supports_check_mode\s*=\s*True', source) is not None
    claim = docs[module]['attributes']['check_mode']['support']
    assert (claim in ('full', 'partial')) == supports_check_mode, (module, claim, supports_check_mode)
    # A module that says diff mode does not apply must not build a diff, and one that claims it must.
    builds_diff = re.search(r"module\._diff|\['diff'\]|'diff':", source) is not None \
        or 'config_files.conclude(' in source
    diff_claim = docs[module]['attributes']['diff_mode']['support']
    assert (diff_claim in ('full', 'partial')) == builds_diff, (module, diff_claim, builds_diff)
