#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: contributors to npu.ascend
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's execution environment image, built here (`make slices`, docs/awx.md).

The definition users get (execution-environment.yml, from the installed collection as `make
ee-context` copies it) is built with ansible-builder and podman, with the three changes this
machine forces, each written into the derived definition .cache/slices/ee/execution-environment.yml:

- the base image: no registry is reachable, so quay.io/centos/centos:stream9 is replaced by a
  Debian bookworm base debootstrapped here (python3.11 in a virtual environment, since Debian's
  system Python refuses ensurepip and pip; apt-get as ansible-builder's package manager);
- Ansible Galaxy is not reachable either: community.general and kubernetes.core come from the
  copies of the `ansible` package in the venv (requirements.txt), packed as collection tarballs and
  installed with `ansible-galaxy collection install --offline`, which still checks them against the
  ranges npu.ascend's galaxy.yml declares;
- pip inside the build is pinned: requirements.txt is the build's PIP_CONSTRAINT, so ansible-core,
  ansible-runner, the kubernetes client and everything they pull in are the versions the
  controller's venv runs; after the build every package in the image must be one requirements.txt
  pins (or one of ansible-builder's own, listed below).

The image is tagged with a hash of everything it is made of (the base recipe, the definition, the
collection's files, the dependency collections, requirements.txt, ansible-builder's version): a
second run finds it and costs nothing. Prints the image's name on the last line.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import fcntl
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EE_CONTEXT = os.path.join(REPO_ROOT, '.cache', 'ee')
WORK_DIR = os.path.join(REPO_ROOT, '.cache', 'slices', 'ee')
REQUIREMENTS = os.path.join(REPO_ROOT, 'requirements.txt')
PODMAN = os.path.join(REPO_ROOT, 'sandbox', 'podman.sh')
# The base rootfs is shared between checkouts, as the node images' are (sandbox/fleet.py).
ROOTFS_CACHE_DIR = os.path.expanduser('~/.cache/npu-ascend')

DEBIAN_SUITE = 'bookworm'
DEBIAN_MIRROR = 'http://deb.debian.org/debian'
# What the base image holds: Python 3.11 with venv (ensurepip's wheels), the SSH client bindep.txt
# asks for (installed here so that the build needs no package index), CA certificates for pip.
# python3.11-venv depends on python3.11-distutils, which only python3-distutils provides: debootstrap
# resolves no virtual package, so it is named (with its own dependencies).
BASE_PACKAGES = ('python3.11', 'python3.11-venv', 'python3', 'python3-distutils', 'python3-lib2to3', 'openssh-client',
                 'ca-certificates')
# ansible-builder installs with `$PYCMD -m pip`: this interpreter, a venv, since Debian's system
# Python refuses `ensurepip` (ansible-builder's pip_install) and pip (PEP 668).
PYTHON_DIR = '/opt/ee/python'
BASE_PATH = PYTHON_DIR + '/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
BASE_REPOSITORY = 'localhost/npu-ascend-ee-base'
IMAGE_REPOSITORY = 'localhost/npu-ascend-ee'
# The collections the image installs besides npu.ascend, from the venv's `ansible` package.
DEPENDENCY_COLLECTIONS = ('community.general', 'kubernetes.core')
# Installed by ansible-builder itself or by ensurepip, not from requirements.txt.
UNPINNED_ALLOWED = frozenset(('pip', 'setuptools', 'dumb-init'))
CONSTRAINTS_PATH = '/etc/npu-ascend-ee/constraints.txt'
# Debian's bundle, which Debian's pip (ensurepip's wheel) reads too.
HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt'


class BuildError(Exception):
    pass


def log(message):
    print('slices-ee: %s' % message, flush=True)


def run(argv, cwd=None):
    return subprocess.run([str(arg) for arg in argv], capture_output=True, text=True, cwd=cwd, check=False)


def must(argv, what, cwd=None):
    result = run(argv, cwd=cwd)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip()[-3000:]
        raise BuildError('%s failed (exit %d): %s' % (what, result.returncode, tail))
    return result


def podman(*args, **kwargs):
    return run([PODMAN] + list(args), **kwargs)


def image_exists(name):
    return podman('image', 'exists', name).returncode == 0


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for block in iter(lambda: handle.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


# -- the base image ---------------------------------------------------------------------------


def base_recipe():
    return 'suite=%s mirror=%s packages=%s python=%s path=%s\n' % (
        DEBIAN_SUITE, DEBIAN_MIRROR, ','.join(BASE_PACKAGES), PYTHON_DIR, BASE_PATH)


def base_hash():
    return hashlib.sha256(base_recipe().encode()).hexdigest()[:12]


def build_base():
    """localhost/npu-ascend-ee-base:<recipe hash>, debootstrapped once per recipe."""
    name = '%s:%s' % (BASE_REPOSITORY, base_hash())
    if image_exists(name):
        log('base image %s is up to date' % name)
        return name
    if shutil.which('debootstrap') is None:
        raise BuildError('debootstrap is missing: it makes the base image (make deps installs it)')
    os.makedirs(ROOTFS_CACHE_DIR, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=ROOTFS_CACHE_DIR, prefix='ee-base-') as work:
        root = os.path.join(work, 'root')
        argv = ['debootstrap', '--variant=minbase', '--include=' + ','.join(BASE_PACKAGES), DEBIAN_SUITE, root,
                DEBIAN_MIRROR]
        log('debootstrap of the base image, a few minutes: %s' % ' '.join(argv))
        try:
            result = run(argv)
        finally:
            with open('/proc/mounts') as mounts:
                below = [line.split()[1] for line in mounts if line.split()[1].startswith(root + '/')]
            for target in sorted(below, key=len, reverse=True):
                run(['umount', '--lazy', target])
        if result.returncode != 0:
            raise BuildError('debootstrap of the execution environment base failed (exit %d); check that %s is '
                             'reachable:\n%s' % (result.returncode, DEBIAN_MIRROR,
                                                 (result.stdout + result.stderr).strip()[-2000:]))
        must(['chroot', root, '/usr/bin/python3.11', '-m', 'venv', '--without-pip', PYTHON_DIR],
             'the base image\'s Python venv')
        # Nothing of the mirror's package lists or debootstrap's downloads in the image.
        for directory in ('var/cache/apt/archives', 'var/lib/apt/lists'):
            for entry in os.listdir(os.path.join(root, directory)):
                path = os.path.join(root, directory, entry)
                if os.path.isfile(path) and not entry.startswith('lock'):
                    os.unlink(path)
        tar = subprocess.Popen(['tar', '--numeric-owner', '--xattrs', '-C', root, '-c', '.'], stdout=subprocess.PIPE)
        imported = subprocess.run(
            [PODMAN, 'import', '--change', 'ENV=PATH=' + BASE_PATH, '--change', 'CMD=/bin/bash',
             '--message', 'npu.ascend execution environment base (Debian %s, Python 3.11 in %s)' % (
                 DEBIAN_SUITE, PYTHON_DIR), '-', name],
            stdin=tar.stdout, capture_output=True, text=True, check=False)
        tar.stdout.close()
        tar.wait()
        if imported.returncode != 0 or tar.returncode != 0:
            raise BuildError('podman import of %s failed: %s' % (name, imported.stderr.strip()))
    log('base image %s built in %.0f s' % (name, time.monotonic() - started))
    return name


# -- the dependency collections ---------------------------------------------------------------


def installed_collection_dir(fqcn):
    import ansible_collections  # the `ansible` package of the venv (requirements.txt)
    for base in ansible_collections.__path__:
        path = os.path.join(base, *fqcn.split('.'))
        if os.path.isfile(os.path.join(path, 'MANIFEST.json')):
            return path
    raise BuildError('%s is not in the venv\'s ansible package (requirements.txt); run make venv' % fqcn)


def pack_collection(fqcn, out_dir):
    """The installed copy of fqcn packed as a collection tarball. The `ansible` package ships its
    collections without their tests and CI files, which their FILES.json still lists, so the tarball
    gets a FILES.json of the files that are there (with their sha256, which ansible-galaxy checks
    on install) and a MANIFEST.json pointing at it. Returns (file name, version, a digest of its content)."""
    source = installed_collection_dir(fqcn)
    with open(os.path.join(source, 'MANIFEST.json')) as handle:
        manifest = json.load(handle)
    version = manifest['collection_info']['version']
    entries = [{'name': '.', 'ftype': 'dir', 'chksum_type': None, 'chksum_sha256': None, 'format': 1}]
    for directory, subdirs, file_names in os.walk(source):
        subdirs[:] = sorted(name for name in subdirs if name != '__pycache__')
        relative = os.path.relpath(directory, source)
        for name in subdirs:
            entries.append({'name': os.path.normpath(os.path.join(relative, name)), 'ftype': 'dir',
                            'chksum_type': None, 'chksum_sha256': None, 'format': 1})
        for name in sorted(file_names):
            path = os.path.normpath(os.path.join(relative, name))
            if path in ('MANIFEST.json', 'FILES.json') or name.endswith('.pyc'):
                continue
            entries.append({'name': path, 'ftype': 'file', 'chksum_type': 'sha256',
                            'chksum_sha256': sha256_file(os.path.join(source, path)), 'format': 1})
    files_json = json.dumps({'files': entries, 'format': 1}, indent=4).encode()
    manifest['file_manifest_file'] = dict(manifest['file_manifest_file'], chksum_sha256=hashlib.sha256(files_json).hexdigest())
    manifest_json = json.dumps(manifest, indent=4).encode()
    name = '%s-%s.tar.gz' % (fqcn.replace('.', '-'), version)
    with tarfile.open(os.path.join(out_dir, name), 'w:gz') as archive:
        for member, payload in (('MANIFEST.json', manifest_json), ('FILES.json', files_json)):
            info = tarfile.TarInfo(member)
            info.size = len(payload)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(payload))
        for entry in entries[1:]:
            archive.add(os.path.join(source, entry['name']), arcname=entry['name'], recursive=False)
    return name, version, hashlib.sha256(files_json).hexdigest()


def tarball_digest(path):
    """A digest of the collection tarball's members (names and contents), not of its bytes: `make
    build` writes new timestamps every time."""
    digest = hashlib.sha256()
    with tarfile.open(path) as archive:
        for member in sorted(archive.getmembers(), key=lambda item: item.name):
            digest.update(('%s\0%s\0' % (member.name, member.type)).encode())
            if member.isfile():
                digest.update(hashlib.sha256(archive.extractfile(member).read()).digest())
    return digest.hexdigest()


# -- the derived definition -------------------------------------------------------------------


def derived_definition(shipped, base_image, dependency_tarballs):
    """The shipped definition with the base image, the package manager, the Galaxy source and
    pip's constraints this machine needs; its dependencies otherwise unchanged."""
    definition = json.loads(json.dumps(shipped))
    definition['images'] = {'base_image': {'name': base_image}}
    dependencies = definition['dependencies']
    dependencies['python_interpreter'] = {'package_system': 'python3.11', 'python_path': PYTHON_DIR + '/bin/python3'}
    collections = []
    by_name = dict((fqcn, name) for fqcn, name in dependency_tarballs)
    for entry in dependencies['galaxy']['collections']:
        if entry.get('name') in by_name:
            collections.append({'name': '/build/collections/' + by_name[entry['name']], 'type': 'file'})
        else:
            collections.append(entry)
    missing = sorted(set(by_name) - set(entry.get('name') for entry in dependencies['galaxy']['collections']))
    if missing:
        raise BuildError('execution-environment.yml no longer lists %s; update tests/slices/ee_image.py'
                         % ', '.join(missing))
    dependencies['galaxy']['collections'] = collections
    definition['options'] = dict(definition.get('options') or {}, package_manager_path='/usr/bin/apt-get')
    definition['build_arg_defaults'] = dict(definition.get('build_arg_defaults') or {},
                                            PKGMGR_PRESERVE_CACHE='always',
                                            ANSIBLE_GALAXY_CLI_COLLECTION_OPTS='--offline')
    files = list(definition.get('additional_build_files') or [])
    files += [{'src': name, 'dest': 'collections'} for _fqcn, name in dependency_tarballs]
    files.append({'src': 'requirements.txt', 'dest': 'constraints'})
    definition['additional_build_files'] = files
    steps = dict(definition.get('additional_build_steps') or {})
    steps['prepend_base'] = list(steps.get('prepend_base') or []) + [
        'COPY _build/constraints/requirements.txt %s' % CONSTRAINTS_PATH,
        'ENV PIP_CONSTRAINT=%s' % CONSTRAINTS_PATH,
    ]
    definition['additional_build_steps'] = steps
    return definition


def image_inputs_hash(definition, collection_digest, dependency_digests, builder_version):
    digest = hashlib.sha256()
    digest.update(json.dumps(definition, sort_keys=True).encode())
    digest.update(('collection=%s\n' % collection_digest).encode())
    for fqcn, value in sorted(dependency_digests.items()):
        digest.update(('%s=%s\n' % (fqcn, value)).encode())
    digest.update(('requirements=%s\nansible-builder=%s\n' % (sha256_file(REQUIREMENTS), builder_version)).encode())
    return digest.hexdigest()[:12]


def unpinned_packages(freeze_text, requirements_text):
    """The packages `pip freeze` shows in the image that requirements.txt does not pin at that
    version: [(name, version, pinned version or None)]."""
    def canonical(name):
        return name.lower().replace('_', '-').replace('.', '-')
    pins = {}
    for line in requirements_text.splitlines():
        line = line.split('#', 1)[0].strip()
        if '==' in line:
            name, version = line.split('==', 1)
            pins[canonical(name)] = version.strip()
    out = []
    for line in freeze_text.splitlines():
        if '==' not in line:
            continue
        name, version = line.strip().split('==', 1)
        if canonical(name) in UNPINNED_ALLOWED:
            continue
        if pins.get(canonical(name)) != version:
            out.append((name, version, pins.get(canonical(name))))
    return out


def build_trust(bundle=HOST_CA_BUNDLE):
    """podman build's volume that lends pip the certificate authorities this machine trusts, for the
    build only: a site whose way to PyPI goes through a proxy with its own authority (this one's does)
    needs it, and the image keeps Debian's own bundle."""
    return ['--volume', '%s:%s:ro' % (bundle, HOST_CA_BUNDLE)] if os.path.isfile(bundle) else []


def build(collection_tarball, shipped_path):
    os.makedirs(WORK_DIR, exist_ok=True)
    with open(os.path.join(WORK_DIR, '.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return build_locked(collection_tarball, shipped_path)


def build_locked(collection_tarball, shipped_path):
    with open(shipped_path) as handle:
        shipped = yaml.safe_load(handle)
    base_image = build_base()
    staging = os.path.join(WORK_DIR, 'definition')
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    tarballs, digests = [], {}
    for fqcn in DEPENDENCY_COLLECTIONS:
        name, version, value = pack_collection(fqcn, staging)
        tarballs.append((fqcn, name))
        digests[fqcn] = value
        log('%s %s from the venv\'s ansible package: %s' % (fqcn, version, name))
    shutil.copy2(collection_tarball, os.path.join(staging, os.path.basename(collection_tarball)))
    shutil.copy2(REQUIREMENTS, os.path.join(staging, 'requirements.txt'))
    definition = derived_definition(shipped, base_image, tarballs)
    with open(os.path.join(staging, 'execution-environment.yml'), 'w') as handle:
        handle.write('---\n# Derived by tests/slices/ee_image.py from the installed collection\'s '
                     'execution-environment.yml (its docstring says what differs, and why).\n')
        yaml.safe_dump(definition, handle, default_flow_style=False, sort_keys=False)
    builder_version = must(['ansible-builder', '--version'], 'ansible-builder --version').stdout.strip()
    inputs = image_inputs_hash(definition, tarball_digest(collection_tarball), digests, builder_version)
    name = '%s:%s' % (IMAGE_REPOSITORY, inputs)
    if image_exists(name):
        log('image %s is up to date (its inputs are unchanged)' % name)
        return name
    started = time.monotonic()
    context = os.path.join(staging, 'context')
    must(['ansible-builder', 'create', '--file', 'execution-environment.yml', '--context', context],
         'ansible-builder create', cwd=staging)
    if not os.path.isfile(os.path.join(context, '_build', 'collections', os.path.basename(collection_tarball))):
        raise BuildError('the build context lacks %s: execution-environment.yml names another tarball than galaxy.yml\'s '
                         'version' % os.path.basename(collection_tarball))
    log('podman build of %s (pip from PyPI, pinned by requirements.txt), a few minutes' % name)
    log_path = os.path.join(WORK_DIR, 'podman-build.log')
    with open(log_path, 'w') as handle:
        result = subprocess.run([PODMAN, 'build', '-f', os.path.join(context, 'Containerfile')] + build_trust() +
                                ['-t', name, context], stdout=handle, stderr=subprocess.STDOUT, check=False)
    if result.returncode != 0:
        with open(log_path) as handle:
            tail = ''.join(handle.readlines()[-40:])
        raise BuildError('podman build failed (exit %d); %s ends:\n%s' % (result.returncode, log_path, tail))
    freeze = must([PODMAN, 'run', '--rm', '--entrypoint', PYTHON_DIR + '/bin/python3', name, '-m', 'pip', 'freeze',
                   '--all'], 'pip freeze in the image')
    with open(REQUIREMENTS) as handle:
        unpinned = unpinned_packages(freeze.stdout, handle.read())
    if unpinned:
        podman('rmi', name)
        raise BuildError('the image installed packages requirements.txt does not pin: %s. Fix: pin them in '
                         'requirements.txt (make venv, pip check)' % ', '.join(
                             '%s %s (pinned: %s)' % row for row in unpinned))
    log('image %s built in %.0f s' % (name, time.monotonic() - started))
    remove_superseded(name)
    return name


def remove_superseded(keep):
    """Older images of this checkout's recipe are removed: only ours, by repository name."""
    listed = podman('images', '--format', '{{.Repository}}:{{.Tag}}', IMAGE_REPOSITORY)
    for line in listed.stdout.split():
        if line.startswith(IMAGE_REPOSITORY + ':') and line != keep:
            podman('rmi', line)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--context-dir', default=EE_CONTEXT,
                        help='where `make ee-context` left the definition and the tarball (default: .cache/ee)')
    args = parser.parse_args(argv)
    shipped = os.path.join(args.context_dir, 'execution-environment.yml')
    tarballs = sorted(name for name in os.listdir(args.context_dir) if name.endswith('.tar.gz'))
    if not os.path.isfile(shipped) or len(tarballs) != 1:
        print('slices-ee: error: %s must hold execution-environment.yml and one collection tarball: run make ee-context'
              % args.context_dir, file=sys.stderr)
        return 1
    try:
        name = build(os.path.join(args.context_dir, tarballs[0]), shipped)
    except BuildError as error:
        print('slices-ee: error: %s' % error, file=sys.stderr)
        return 1
    print(name)
    return 0


if __name__ == '__main__':
    sys.exit(main())
