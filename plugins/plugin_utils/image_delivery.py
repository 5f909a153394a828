# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side decisions of roles/images: which container images a node lacks, whether their
archives in the package source may be loaded, and whether an import gave the node what it lacked.

An image reference in a DaemonSet (``ascend-k8sdeviceplugin:v7.3.0``) is what the kubelet asks the
engine for; containerd's CRI and Docker both read a name without a registry as Docker Hub's
(``docker.io/library/ascend-k8sdeviceplugin:v7.3.0``), so names are compared in that full form.
Pure functions, no Ansible imports.
"""

from __future__ import annotations

import re

from ansible_collections.npu.ascend.plugins.plugin_utils.package_trust import file_name_problem

DEFAULT_DOMAIN = 'docker.io'
# docker/distribution's grammar, simplified: a registry host (with a port), a lower-case path of
# components, a tag, a digest.
_DOMAIN = re.compile(r'\A[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]+)?\Z')
_COMPONENT = r'[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*'
_REMAINDER = re.compile(r'\A(?P<path>%s(?:/%s)*)(?::(?P<tag>\w[\w.-]{0,127}))?(?:@(?P<digest>sha256:[0-9a-f]{64}))?\Z'
                        % (_COMPONENT, _COMPONENT))
SHA256 = re.compile(r'\A[0-9a-f]{64}\Z')


class ImageReferenceError(ValueError):
    """A string that is not an image reference."""


def parse_reference(text):
    """``{domain, path, tag, digest}`` of an image reference, with Docker's defaults applied: no
    registry is ``docker.io``, a one-component path there is ``library/<name>``, no tag and no digest
    is ``latest``. A first component counts as a registry when it has a ``.`` or ``:`` or is
    ``localhost``, as Docker decides it."""
    if not isinstance(text, str) or not text.strip():
        raise ImageReferenceError('an image reference must be a non-empty string, got %r' % (text,))
    text = text.strip()
    domain, rest = DEFAULT_DOMAIN, text
    first, sep, remainder = text.partition('/')
    if sep and ('.' in first or ':' in first or first == 'localhost'):
        domain, rest = first, remainder
    match = _REMAINDER.match(rest)
    if not match or not _DOMAIN.match(domain):
        raise ImageReferenceError('%s is not an image reference ([registry/]name[:tag][@sha256:digest], the '
                                  'name in lower case)' % ascii(text))
    if domain == 'index.docker.io':
        domain = DEFAULT_DOMAIN
    path = match.group('path')
    if domain == DEFAULT_DOMAIN and '/' not in path:
        path = 'library/' + path
    tag, digest = match.group('tag'), match.group('digest')
    if tag is None and digest is None:
        tag = 'latest'
    return {'domain': domain, 'path': path, 'tag': tag, 'digest': digest}


def normalize_reference(text):
    """The full form of an image reference, as containerd's CRI names it."""
    ref = parse_reference(text)
    out = '%s/%s' % (ref['domain'], ref['path'])
    if ref['tag']:
        out += ':' + ref['tag']
    if ref['digest']:
        out += '@' + ref['digest']
    return out


def listed_references(listing):
    """The images a probe listed, in full form: the lines of ``ctr -n k8s.io images ls -q`` (full
    references, and ``sha256:<id>`` entries CRI adds, which name no image) or of ``docker image ls
    --format '{{.Repository}}:{{.Tag}}'`` (familiar names; ``<none>`` for untagged images)."""
    refs = set()
    for line in (listing or '').splitlines():
        line = line.strip()
        if not line or line.startswith('sha256:') or '<none>' in line:
            continue
        try:
            refs.add(normalize_reference(line))
        except ImageReferenceError:
            continue
    return refs


def default_file_name(image, arch):
    """The archive our convention expects for ``image`` (Huawei publishes no name for an image archive):
    ``<last path component>_<tag>_linux-<arch>.tar``, as a ``docker save`` of the image for that architecture."""
    ref = parse_reference(image)
    return '%s_%s_linux-%s.tar' % (ref['path'].rsplit('/', 1)[-1], ref['tag'], arch)


def plan(wanted, listing, arch, base_archive=''):
    """One entry per wanted image: ``image`` (as the DaemonSet names it), ``ref`` (its full form),
    ``present`` (the node's engine has it), ``file_name`` (the archive that would deliver it), ``package``,
    ``base`` and ``dockerfile`` (when it is assembled from a component zip on a base image archive),
    ``sources`` (the files of the package source it comes from, whose sha256 is checked), ``arch`` and
    ``problem`` ('' or why the entry cannot be used).

    ``wanted`` is a list of image references or of dicts ``{image, file_name?, package?, base?,
    dockerfile?}``; ``base_archive`` is the base of an entry with a package and no base of its own."""
    present = listed_references(listing)
    entries = []
    seen = set()
    for item in wanted or []:
        if isinstance(item, str):
            item = {'image': item}
        if not isinstance(item, dict) or 'image' not in item:
            raise ImageReferenceError('each wanted image must be a reference or a dict with image (and file_name), '
                                      'got %r' % (item,))
        image = str(item['image']).strip()
        package = str(item.get('package') or '').strip()
        base = str(item.get('base') or (base_archive if package else '') or '').strip()
        entry = {'image': image, 'ref': '', 'present': False, 'file_name': item.get('file_name') or '', 'problem': '',
                 'package': package, 'base': base, 'dockerfile': str(item.get('dockerfile') or 'Dockerfile'),
                 'sources': [], 'arch': str(arch or '')}
        try:
            ref = parse_reference(image)
        except ImageReferenceError as error:
            entry['problem'] = str(error)
            entries.append(entry)
            continue
        if ref['digest'] or not ref['tag']:
            entry['problem'] = ('%s names a digest: an archive carries the image under its tags, not under the '
                                'digest a registry gives it; name the image by its tag' % image)
            entries.append(entry)
            continue
        entry['ref'] = normalize_reference(image)
        if entry['ref'] in seen:
            continue
        seen.add(entry['ref'])
        entry['present'] = entry['ref'] in present
        if not entry['file_name'] and not arch and not entry['present']:
            entry['problem'] = ('the archive of %s cannot be named: the node\'s architecture is unknown (set '
                                'images_arch, or images_wanted[].file_name)' % image)
            entries.append(entry)
            continue
        if not entry['file_name']:
            entry['file_name'] = default_file_name(image, arch)
        # From a component package, the archive is assembled on the controller from the zip and the base
        # image archive, the two files of the package source whose sha256 is checked.
        entry['sources'] = [package, base] if package else [entry['file_name']]
        if package and not base and not entry['present']:
            entry['problem'] = ('%s is to be assembled from the component package %s, but no base image archive is '
                                'named (images_base_archive: a `docker save` of the image its Dockerfile names in '
                                'FROM)' % (image, package))
        for name in [entry['file_name']] + entry['sources']:
            name_problem = file_name_problem(name)
            if name_problem and not entry['present'] and not entry['problem']:
                entry['problem'] = name_problem.replace('package file name', 'image archive name')
        entries.append(entry)
    return entries


def judgement(entries, sums, source_dir, source_files, allow_unverified=False):
    """The entries of ``plan`` with, for each missing image, whether its archive may be loaded:
    ``problem`` and ``fix`` when not, ``warning`` when only the opt-out lets it through.

    ``sums`` is {file name: sha256} (``SHA256SUMS`` beside the archives and the pins);
    ``source_files`` is {file name: {exists, checksum, error}} of the controller's files."""
    judged = []
    for entry in entries:
        entry = dict(entry, fix=entry.get('fix', ''), warning='')
        if entry['present'] or entry['problem']:
            if entry['problem'] and not entry['fix']:
                entry['fix'] = 'correct images_wanted'
            judged.append(entry)
            continue
        for name in entry.get('sources') or [entry['file_name']]:
            _judge_file(entry, name, sums, source_dir, source_files, allow_unverified)
            if entry['problem']:
                break
        judged.append(entry)
    return judged


def _judge_file(entry, name, sums, source_dir, source_files, allow_unverified):
    """Sets ``problem`` and ``fix`` (or ``warning``) of ``entry`` for one file of the package source it
    is delivered from: the image archive, or the component zip and the base image archive."""
    where = '%s/%s' % (source_dir.rstrip('/'), name) if source_dir else name
    found = (source_files or {}).get(name) or {}
    expected = (sums or {}).get(name)
    role = ('the component package' if name == entry.get('package')
            else 'the base image archive' if name == entry.get('base') else 'the archive')
    if not source_dir:
        entry['problem'] = 'the node has no %s and no package source is set to load it from' % entry['image']
        entry['fix'] = ('set images_source_dir (by default packages_source_dir) to the directory holding %s, '
                        'or load the image on the node yourself' % name)
    elif not found.get('exists'):
        why = found.get('error') or 'is missing'
        entry['problem'] = 'the node has no %s, and %s %s %s' % (entry['image'], role, where, why)
        if entry.get('package') and name == entry['package']:
            entry['fix'] = ('put Huawei\'s component zip there (from its support site or the MindCluster release '
                            'downloads), or name it in images_wanted[].package')
        elif entry.get('package'):
            entry['fix'] = ('put a `docker save` archive of the image the package\'s Dockerfile names in FROM there '
                            '(`docker save ubuntu:22.04 -o %s` on a machine that has it, for this architecture), or '
                            'name it in images_base_archive' % name)
        else:
            entry['fix'] = ('put the image archive there (`docker save %s -o %s` on a machine that has the image, '
                            'or Huawei\'s image archive renamed so), or name the file in images_wanted[].file_name'
                            % (entry['image'], name))
    elif expected is None:
        if allow_unverified:
            entry['warning'] = ((entry['warning'] + '; ') if entry['warning'] else '') + (
                '%s is used without a known sha256 (images_allow_unverified=true): whoever can write the package '
                'source chooses what runs privileged on the node' % where)
        else:
            entry['problem'] = ('%s %s of %s has no sha256 in SHA256SUMS beside it or in images_sha256sums, so '
                                'nothing vouches for what would run privileged on the node' % (role, where, entry['image']))
            entry['fix'] = ('add `<sha256>  %s` to SHA256SUMS (the sha256 of the file you checked), or pin it in '
                            'images_sha256sums, or (accepting the risk) set images_allow_unverified=true' % name)
    elif not SHA256.match(str(expected).lower()):
        entry['problem'] = 'the sha256 given for %s is not 64 hex digits: %s' % (name, ascii(str(expected)))
        entry['fix'] = 'give the 64-character sha256 of the file'
    elif found.get('checksum') != str(expected).lower():
        entry['problem'] = ('%s %s has sha256 %s, not the %s expected: it is not the file that was checked'
                            % (role, where, found.get('checksum'), str(expected).lower()))
        entry['fix'] = 'replace the file with the one the checksum names, or correct the checksum if the file is the right one'


# Hosts a bundle line names before it counts the rest, as for the .run packages.
BUNDLE_HOSTS_SHOWN = 5


def bundle(plans_by_host, sums, source_dir, source_files, allow_unverified=False):
    """The distinct files of the package source the images of a fleet come from, each once, problems
    first: {file_name, source_file, images, hosts, problem, fix, sha256, line}; source_file is false for a
    row that names an image no file can make (its problem is in images_wanted). ``plans_by_host``: host -> what
    ``plan`` returned for it (with an empty listing: before any server is reachable nothing is known
    to be present), or None for a host that did not get that far. Each file is judged on its own, so
    a wrong base archive and a missing zip are both named."""
    files = {}
    for host in sorted(plans_by_host):
        for entry in plans_by_host[host] or []:
            if entry.get('present'):
                continue
            if entry.get('problem'):
                row = files.setdefault(('', entry['image']), {
                    'file_name': entry.get('file_name') or entry['image'], 'source_file': False, 'images': [entry['image']], 'hosts': [],
                    'problem': entry['problem'], 'fix': 'correct images_wanted', 'sha256': ''})
                row['hosts'].append(host)
                continue
            for name in entry.get('sources') or [entry['file_name']]:
                row = files.get(('file', name))
                if row is None:
                    probe = dict(entry, problem='', fix='', warning='')
                    _judge_file(probe, name, sums, source_dir, source_files, allow_unverified)
                    row = files[('file', name)] = {
                        'file_name': name, 'source_file': True, 'images': [], 'hosts': [], 'problem': probe['problem'], 'fix': probe['fix'],
                        'sha256': ((source_files or {}).get(name) or {}).get('checksum') or ''}
                if entry['image'] not in row['images']:
                    row['images'].append(entry['image'])
                if host not in row['hosts']:
                    row['hosts'].append(host)
    rows = sorted(files.values(), key=lambda row: (not row['problem'], row['file_name']))
    for row in rows:
        hosts = row['hosts']
        named = ', '.join(hosts[:BUNDLE_HOSTS_SHOWN]) + (' and %d more' % (len(hosts) - BUNDLE_HOSTS_SHOWN)
                                                         if len(hosts) > BUNDLE_HOSTS_SHOWN else '')
        images = ', '.join(row['images'])
        if row['problem']:
            row['line'] = 'FAIL %s (image %s, for %s): %s -- fix: %s' % (row['file_name'], images, named, row['problem'], row['fix'])
        else:
            row['line'] = 'OK   %s (image %s, sha256 %s, for %s)' % (row['file_name'], images, row['sha256'][:16], named)
    return rows


def import_problems(entries, listing_before, listing_after, engine):
    """Why the images a node lacked are still missing after their archives were imported ([] when
    none is): an archive that holds another name than the DaemonSet asks for loads uselessly."""
    before = listed_references(listing_before)
    after = listed_references(listing_after)
    added = sorted(after - before)
    problems = []
    for entry in entries:
        if entry['present'] or entry['problem'] or entry['ref'] in after:
            continue
        held = ', '.join(added) if added else 'no image new to the node'
        retag = ('ctr -n k8s.io images tag <name> %s' % entry['ref'] if engine == 'containerd'
                 else 'docker tag <name> %s' % entry['image'])
        problems.append('%s was imported into %s but the node still has no %s (the import added: %s). Fix: save '
                        'the archive from the image under the name the DaemonSet uses (`docker tag` it before '
                        '`docker save`), or tag it on the node (`%s`), or set the DaemonSet\'s image to the name '
                        'the archive holds' % (entry['file_name'], engine, entry['image'], held, retag))
    return problems
