# -*- coding: utf-8 -*-
"""The collection tarball holds the collection and nothing of the development rig, and the
execution environment is made from it.

Two builds: one of the checkout as it stands (whatever caches, scenario state and
bytecode the tools have left in it), one of a copy of the files git knows about with every kind
of leftover planted in it at several depths. Both must hold only the entries listed here, and
the copy's tarball must hold every file of the collection proper (so build_ignore cannot grow
to swallow a role's file either). Then what ansible-builder reads from the installed tarball,
and the build context `ansible-builder create` makes from execution-environment.yml.
"""

import os
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ANSIBLE_GALAXY = os.path.join(os.path.dirname(sys.executable), 'ansible-galaxy')

# What a user of the collection gets: the top-level entries of the tarball.
_SHIPPED_TOP_LEVEL = frozenset([
    'MANIFEST.json', 'FILES.json', 'README.md', 'LICENSE', 'bindep.txt', 'execution-environment.yml',
    'meta', 'plugins', 'roles', 'playbooks', 'docs', 'changelogs', 'inventories',
])
# Directories that ship only in part, with the entries of theirs that do.
_SHIPPED_IN_PART = {
    'inventories': ('example',),
    'changelogs': ('changelog.yaml', 'config.yaml', 'fragments'),
}
# The collection proper: every file git knows under these ships.
_COLLECTION_DIRS = ('meta', 'plugins', 'roles', 'playbooks', 'docs', 'inventories/example')
# Names that are development leftovers wherever they appear.
_FORBIDDEN_NAMES = frozenset(['.cache', '.ansible', '__pycache__', '.pytest_cache', '.hypothesis',
                              '.mypy_cache', '.tox', '.git', '.venv', 'molecule', '.plugin-cache.yaml'])
_FORBIDDEN_SUFFIXES = ('.pyc', '.pyo', '.retry', '.tar.gz')

# Leftovers the tools make, planted in the copy: caches at the top and deep down, scenario
# state, bytecode, a previous build, the changelog tool's cache.
_PLANTED = (
    '.cache/dist/npu-ascend-0.9.0.tar.gz',
    '.cache/molecule/host_stack/default/state.yml',
    '.cache/collections/ansible_collections/other/thing/README.md',
    'molecule/host_stack/.cache/inventory.yml',
    'roles/hdk/.cache/leftover.txt',
    'roles/hdk/tasks/.ansible/facts.json',
    'plugins/modules/__pycache__/ascend_facts.cpython-311.pyc',
    'plugins/module_utils/hardware/npu_smi.pyc',
    'plugins/.pytest_cache/v/cache/lastfailed',
    '.hypothesis/examples/abc',
    '.ansible/collections/ansible_collections/x/y/README.md',
    'changelogs/.plugin-cache.yaml',
    'npu-ascend-0.9.0.tar.gz',
    'tests/output/junit/result.xml',
    'playbooks/site.retry',
)


def _problems(entries):
    """Every tarball entry that should not be there, with the reason."""
    problems = []
    for entry in entries:
        parts = entry.rstrip('/').split('/')
        if parts[0] not in _SHIPPED_TOP_LEVEL:
            problems.append('%s: %s is not part of the collection' % (entry, parts[0]))
        elif parts[0] in _SHIPPED_IN_PART and len(parts) > 1 and parts[1] not in _SHIPPED_IN_PART[parts[0]]:
            problems.append('%s: only %s of %s/ ship' % (entry, ', '.join(_SHIPPED_IN_PART[parts[0]]), parts[0]))
        elif any(part in _FORBIDDEN_NAMES for part in parts):
            problems.append('%s: a development leftover' % entry)
        elif entry.endswith(_FORBIDDEN_SUFFIXES):
            problems.append('%s: a build or bytecode leftover' % entry)
    return problems


def _build(source, output):
    completed = subprocess.run(
        [ANSIBLE_GALAXY, 'collection', 'build', '--force', '--output-path', str(output), str(source)],
        env=dict(os.environ, LC_ALL='C.UTF-8', ANSIBLE_NOCOLOR='1'),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert completed.returncode == 0, completed.stdout
    tarballs = [name for name in os.listdir(str(output)) if name.endswith('.tar.gz')]
    assert len(tarballs) == 1, tarballs
    with tarfile.open(os.path.join(str(output), tarballs[0])) as tarball:
        return [member.name for member in tarball.getmembers()]


def _git_files():
    listed = subprocess.run(['git', '-C', REPO_ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
                            stdout=subprocess.PIPE, check=True, env=dict(os.environ, LC_ALL='C.UTF-8')).stdout
    return [path for path in listed.decode('utf-8').split('\0')
            if path and os.path.isfile(os.path.join(REPO_ROOT, path))]


@pytest.fixture(scope='module')
def git_files():
    if shutil.which('git') is None or subprocess.run(['git', '-C', REPO_ROOT, 'rev-parse', '--git-dir'],
                                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                                     check=False).returncode != 0:
        pytest.skip('the tarball tests list the collection with git; this is not a git checkout')
    return _git_files()


def test_the_problem_finder_names_each_kind_of_leftover():
    # The check itself can fail: every rule fires on an entry made for it, and passes the real ones.
    assert _problems(['roles/hdk/tasks/main.yml', 'inventories/example/hosts.yml', 'changelogs/changelog.yaml',
                      'bindep.txt', 'meta/ee-requirements.txt']) == []
    found = _problems(['sandbox/fleet.py', 'inventories/sandbox/hosts.yml', 'changelogs/.plugin-cache.yaml',
                       'roles/hdk/.cache/x', 'plugins/modules/__pycache__/', 'plugins/x.pyc',
                       'docs/old.tar.gz', 'Makefile', 'requirements.txt', 'tests/unit/conftest.py'])
    assert len(found) == 10, found


@pytest.fixture(scope='module')
def checkout_tarball(tmp_path_factory, git_files):
    output = tmp_path_factory.mktemp('dist')
    entries = _build(REPO_ROOT, output)
    return os.path.join(str(output), os.listdir(str(output))[0]), entries


def test_the_checkout_builds_a_tarball_of_the_collection_only(checkout_tarball):
    problems = _problems(checkout_tarball[1])
    assert problems == [], '\n'.join(problems)


def test_a_tree_full_of_leftovers_builds_the_same_collection(tmp_path, git_files):
    tree = tmp_path / 'ansible_collections' / 'npu' / 'ascend'
    for path in git_files:
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.join(REPO_ROOT, path), str(target))
    for path in _PLANTED:
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(u'left over by a tool\n')
    output = tmp_path / 'dist'
    output.mkdir()

    entries = _build(tree, output)

    problems = _problems(entries)
    assert problems == [], '\n'.join(problems)
    shipped = set(entry.rstrip('/') for entry in entries)
    missing = [path for path in git_files
               if path.startswith(tuple(directory + '/' for directory in _COLLECTION_DIRS))
               and path not in shipped and not path.endswith(_FORBIDDEN_SUFFIXES)]
    assert missing == [], 'build_ignore drops files of the collection: %s' % missing
    for required in ('README.md', 'LICENSE', 'meta/runtime.yml', 'meta/execution-environment.yml',
                     'execution-environment.yml',
                     'meta/ee-requirements.txt', 'bindep.txt', 'changelogs/changelog.yaml'):
        assert required in shipped, required


def _galaxy():
    with open(os.path.join(REPO_ROOT, 'galaxy.yml'), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def _yaml(path):
    with open(os.path.join(REPO_ROOT, path), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def _requirement_names(lines):
    return set(line.split('>')[0].split('=')[0].split('<')[0].split('[')[0].strip().lower()
               for line in lines if line.strip() and not line.lstrip().startswith('#'))


def test_the_installed_tarball_gives_ansible_builder_the_controller_requirements_only(tmp_path, checkout_tarball):
    collections = tmp_path / 'collections'
    installed = subprocess.run(
        [ANSIBLE_GALAXY, 'collection', 'install', '--no-deps', '--offline', '--force', '-p', str(collections),
         checkout_tarball[0]],
        # Only the empty path: the checkout's own link (.cache/collections) must not count as installed.
        env=dict(os.environ, LC_ALL='C.UTF-8', ANSIBLE_NOCOLOR='1', ANSIBLE_COLLECTIONS_PATH=str(collections)),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert installed.returncode == 0, installed.stdout
    import ansible_builder
    introspect = os.path.join(os.path.dirname(ansible_builder.__file__), '_target_scripts', 'introspect.py')
    pip_file, bindep_file = tmp_path / 'requirements.txt', tmp_path / 'bindep.txt'
    introspected = subprocess.run(
        [sys.executable, introspect, 'introspect', str(collections),
         '--write-pip', str(pip_file), '--write-bindep', str(bindep_file)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert introspected.returncode == 0, introspected.stdout

    python_lines = pip_file.read_text().splitlines()
    assert any(line.startswith('kubernetes>=') and 'npu.ascend' in line for line in python_lines), python_lines
    # None of the development pins (ansible-lint, molecule, pytest, ...) reaches an image.
    with open(os.path.join(REPO_ROOT, 'requirements.txt'), encoding='utf-8') as handle:
        development = _requirement_names(handle) - _requirement_names(
            open(os.path.join(REPO_ROOT, 'meta', 'ee-requirements.txt'), encoding='utf-8'))
    leaked = _requirement_names(line.split('#')[0] for line in python_lines) & development
    assert leaked == set(), leaked
    # Ranges, not pins: the image builder resolves them with the other collections' requirements.
    assert not any('==' in line for line in python_lines), python_lines
    assert 'openssh-client [platform:dpkg]' in bindep_file.read_text()


def test_the_dependency_ranges_agree_everywhere():
    wanted = _galaxy()['dependencies']
    project_sync = dict((entry['name'], entry['version']) for entry in _yaml('collections/requirements.yml')['collections'])
    assert project_sync == wanted
    ee_galaxy = _yaml('execution-environment.yml')['dependencies']['galaxy']['collections']
    assert dict((entry['name'], entry['version']) for entry in ee_galaxy if 'version' in entry) == wanted


def test_the_execution_environment_context_holds_the_tarball_of_this_version(tmp_path, checkout_tarball):
    galaxy = _galaxy()
    tarball_name = '%s-%s-%s.tar.gz' % (galaxy['namespace'], galaxy['name'], galaxy['version'])
    assert os.path.basename(checkout_tarball[0]) == tarball_name
    # As docs/awx.md says: the definition, taken from the tarball, beside the tarball.
    with tarfile.open(checkout_tarball[0]) as archive:
        shipped = archive.extractfile('execution-environment.yml').read()
    (tmp_path / 'execution-environment.yml').write_bytes(shipped)
    shutil.copy2(checkout_tarball[0], str(tmp_path))
    context = tmp_path / 'context'
    created = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'ansible-builder'), 'create',
         '--file', str(tmp_path / 'execution-environment.yml'), '--context', str(context)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert created.returncode == 0, created.stdout

    assert (context / '_build' / 'collections' / tarball_name).is_file(), created.stdout
    requirements = yaml.safe_load((context / '_build' / 'requirements.yml').read_text())
    assert {'name': '/build/collections/' + tarball_name, 'type': 'file'} in requirements['collections']
    containerfile = (context / 'Containerfile').read_text()
    assert 'COPY _build /build' in containerfile
    assert 'introspect.py introspect' in containerfile
