# -*- coding: utf-8 -*-
"""The ansible-core releases the collection claims are the ones the tests run: meta/runtime.yml, every role's
meta/main.yml, README.md and execution-environment.yml name the oldest release `make releases` pins
(tests/releases/requirements-<release>.txt) and the newest, requirements.txt's for `make test`."""

import os
import re

import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _read(*path):
    with open(os.path.join(REPO_ROOT, *path), encoding='utf-8') as handle:
        return handle.read()


def _tested_release():
    pin = re.search(r'^ansible-core==(\d+)\.(\d+)\.', _read('requirements.txt'), re.MULTILINE)
    assert pin, 'requirements.txt pins no ansible-core'
    return '%s.%s' % pin.groups()


def _older_releases():
    """The releases `make releases` tests, from the pins of tests/releases/requirements-<release>.txt."""
    releases = {}
    directory = os.path.join(REPO_ROOT, 'tests', 'releases')
    for name in sorted(os.listdir(directory)):
        named = re.match(r'^requirements-(\d+\.\d+)\.txt$', name)
        if named:
            pin = re.search(r'^ansible-core==(\d+\.\d+)\.', _read('tests', 'releases', name), re.MULTILINE)
            assert pin and pin.group(1) == named.group(1), name
            releases[named.group(1)] = name
    return sorted(releases, key=lambda release: tuple(int(part) for part in release.split('.')))


def _oldest_release():
    return _older_releases()[0]


def test_make_releases_runs_every_pinned_release_and_every_minor_release_up_to_the_newest():
    named = re.search(r'^RELEASES := (.*)$', _read('Makefile'), re.MULTILINE).group(1).split()
    assert named == _older_releases()
    minors = [int(release.split('.')[1]) for release in _older_releases() + [_tested_release()]]
    assert minors == list(range(minors[0], minors[-1] + 1)), minors


def test_the_scenario_of_the_oldest_release_runs_on_it():
    """host_stack_incompatible runs on the oldest release's ansible-playbook, whose venv `make molecule` makes."""
    scenario = _read('molecule', 'host_stack_incompatible', 'molecule.yml')
    assert '/.cache/releases/%s/venv/bin:${PATH}' % _oldest_release() in scenario
    assert "== '%s'" % _oldest_release() in _read('molecule', 'host_stack_incompatible', 'verify.yml')
    assert 'tests/releases/run.py --venvs-only %s\n' % _oldest_release() in _read('Makefile')


def test_requires_ansible_is_the_oldest_tested_release():
    runtime = yaml.safe_load(_read('meta', 'runtime.yml'))
    assert runtime['requires_ansible'] == '>=%s.0' % _oldest_release()


def test_every_role_claims_the_oldest_tested_release():
    wrong = {}
    for role in sorted(os.listdir(os.path.join(REPO_ROOT, 'roles'))):
        meta = yaml.safe_load(_read('roles', role, 'meta', 'main.yml'))
        if str(meta['galaxy_info']['min_ansible_version']) != _oldest_release():
            wrong[role] = meta['galaxy_info']['min_ansible_version']
    assert wrong == {}


def test_the_readme_claims_the_tested_releases_and_no_other():
    requirements = _read('README.md').split('## Requirements', 1)[1].split('\n## ', 1)[0]
    claimed = set(re.findall(r'ansible-core (\d+\.\d+)', requirements))
    assert claimed == {_oldest_release(), _tested_release()}, claimed
    assert 'ansible-core %s to %s' % (_oldest_release(), _tested_release()) in ' '.join(requirements.split())


def test_the_execution_environment_installs_a_tested_release():
    definition = yaml.safe_load(_read('execution-environment.yml'))
    major, minor = _tested_release().split('.')
    assert definition['dependencies']['ansible_core']['package_pip'] == \
        'ansible-core>=%s,<%s.%d' % (_oldest_release(), major, int(minor) + 1)


def test_the_readme_installs_the_pinned_releases():
    """README.md's install commands (which molecule/example runs verbatim) pin what requirements.txt pins."""
    import subprocess
    import sys
    commands = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'tests', 'readme_commands.py'),
                               os.path.join(REPO_ROOT, 'README.md'), 'readme-install'],
                              stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.splitlines()
    pip = [command.split()[2:] for command in commands if command.startswith('pip install ')]
    pins = dict(re.findall(r'^([a-z-]+)==(\S+)', _read('requirements.txt'), re.MULTILINE))
    assert pip and all('==' in package and pins.get(package.split('==')[0]) == package.split('==')[1]
                       for package in pip[0]), pip
    assert {'ansible-core', 'ansible'} <= set(package.split('==')[0] for package in pip[0])
    # The tarball the install line names is the one galaxy.yml's version builds.
    version = yaml.safe_load(_read('galaxy.yml'))['version']
    assert any('npu-ascend-%s.tar.gz' % version in command for command in commands), commands
