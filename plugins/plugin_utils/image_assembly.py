# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side assembly of a container image from one of Huawei's MindCluster component zips
(``Ascend-mindxdl-device-plugin_<version>_linux-<arch>.zip``: the binary, a Dockerfile, the
manifests) on top of a base image archive the operator supplies (``docker save`` or an OCI layout
archive of the image the Dockerfile's FROM names), without a builder.

An air-gapped node has containerd's ``ctr``, which imports an image but cannot build one; Docker,
buildah or nerdctl may not be there at all. A Dockerfile whose only file changes are COPY lines
(Huawei's: COPY the binary and its JSON files, ENV, and a RUN that adds a user and tightens modes)
needs no builder: the COPY lines become one more layer over the base image's layers, ENV, WORKDIR,
USER, ENTRYPOINT and CMD go into the image config, and the result is a ``docker save`` archive that
``ctr images import`` and ``docker load`` both take. RUN lines cannot be replayed without running the
base image; they are returned (``skipped``) so that the caller names them. ADD and multi-stage
builds are refused.

The same inputs give the same bytes (no time stamps), so a converged controller rewrites nothing.
Pure functions over file objects, no Ansible imports.
"""

from __future__ import annotations

import hashlib
import io
import json
import posixpath
import shlex
import tarfile
import zipfile

# The image config's architecture of a node architecture (uname -m).
OCI_ARCHITECTURES = {'x86_64': 'amd64', 'aarch64': 'arm64'}
# Instructions that only set the image's metadata; LABEL, EXPOSE, ... leave no trace a pod needs.
_METADATA_ONLY = {'LABEL', 'EXPOSE', 'MAINTAINER', 'STOPSIGNAL', 'HEALTHCHECK', 'ARG', 'SHELL', 'VOLUME', 'ONBUILD'}


class AssemblyError(ValueError):
    """A package or base archive the image cannot be assembled from; the text says why."""


def _logical_lines(text):
    """The Dockerfile's instructions, continuation lines joined, comments and blank lines dropped."""
    lines, current = [], ''
    for raw in text.splitlines():
        stripped = raw.strip()
        if not current and (not stripped or stripped.startswith('#')):
            continue
        if current and stripped.startswith('#'):
            continue
        if stripped.endswith('\\'):
            current += stripped[:-1] + ' '
            continue
        current += stripped
        if current.strip():
            lines.append(current.strip())
        current = ''
    if current.strip():
        lines.append(current.strip())
    return lines


def _exec_form(argument):
    """ENTRYPOINT/CMD as a list: the JSON form as written, the shell form through /bin/sh -c."""
    if argument.startswith('['):
        try:
            value = json.loads(argument)
        except ValueError:
            value = None
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return value
    return ['/bin/sh', '-c', argument]


def _env_pairs(argument):
    """ENV's key=value pairs (several per line, quoted values), or the old ``ENV key value`` form."""
    try:
        words = shlex.split(argument, posix=True)
    except ValueError as error:
        raise AssemblyError('ENV %s cannot be read: %s' % (ascii(argument), error))
    if words and '=' not in words[0]:
        key, _separator, value = argument.partition(' ')
        return [(key.strip(), value.strip())]
    pairs = []
    for word in words:
        key, separator, value = word.partition('=')
        if not separator or not key:
            raise AssemblyError('ENV %s is neither `key=value ...` nor `key value`' % ascii(argument))
        pairs.append((key, value))
    return pairs


def parse_dockerfile(text):
    """What the Dockerfile asks of the image: ``base`` (FROM), ``env`` [(key, value)], ``copies``
    [{sources, dest, chmod}], ``workdir``, ``user``, ``entrypoint``, ``cmd`` (None when not set) and
    ``skipped`` (the RUN lines, which need a builder). Raises AssemblyError for what cannot be
    replayed without one (ADD, COPY --from, a second FROM) or is not Dockerfile syntax."""
    spec = {'base': None, 'env': [], 'copies': [], 'workdir': None, 'user': None, 'entrypoint': None,
            'cmd': None, 'skipped': []}
    for line in _logical_lines(text):
        instruction, _space, argument = line.partition(' ')
        instruction, argument = instruction.upper(), argument.strip()
        if instruction == 'FROM':
            if spec['base'] is not None:
                raise AssemblyError('the Dockerfile has a second FROM (a multi-stage build), which needs a builder')
            spec['base'] = argument.split()[0] if argument else ''
        elif spec['base'] is None:
            if instruction not in ('ARG',):
                raise AssemblyError('the Dockerfile has %s before its FROM' % instruction)
        elif instruction == 'ENV':
            spec['env'].extend(_env_pairs(argument))
        elif instruction == 'COPY':
            spec['copies'].append(_copy(argument))
        elif instruction == 'WORKDIR':
            spec['workdir'] = posixpath.join(spec['workdir'] or '/', argument)
        elif instruction == 'USER':
            spec['user'] = argument
        elif instruction in ('ENTRYPOINT', 'CMD'):
            spec[instruction.lower()] = _exec_form(argument)
        elif instruction == 'RUN':
            spec['skipped'].append(line)
        elif instruction in _METADATA_ONLY:
            continue
        elif instruction == 'ADD':
            raise AssemblyError('the Dockerfile ADDs %s: ADD may fetch or unpack, which is left to a builder' % argument)
        else:
            raise AssemblyError('the Dockerfile has an instruction %s that is not Dockerfile syntax' % ascii(instruction))
    if spec['base'] is None:
        raise AssemblyError('the Dockerfile has no FROM')
    return spec


def _copy(argument):
    chmod = None
    rest = argument.strip()
    while rest.startswith('--'):
        word, _space, rest = rest.partition(' ')
        rest = rest.strip()
        flag, _separator, value = word[2:].partition('=')
        if flag == 'chmod':
            try:
                chmod = int(value, 8)
            except ValueError:
                raise AssemblyError('COPY --chmod=%s is not an octal mode' % value)
        elif flag in ('chown', 'link'):
            # Files are root's in the layer either way; the pods of the DaemonSets run as root.
            continue
        else:
            raise AssemblyError('COPY --%s needs a builder (only --chmod, --chown and --link are replayed)' % flag)
    try:
        words = json.loads(rest) if rest.startswith('[') else shlex.split(rest, posix=True)
    except ValueError as error:
        raise AssemblyError('COPY %s cannot be read: %s' % (ascii(argument), error))
    if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
        raise AssemblyError('COPY %s is not a list of paths' % ascii(argument))
    if len(words) < 2:
        raise AssemblyError('COPY %s names no source or no destination' % argument)
    return {'sources': words[:-1], 'dest': words[-1], 'chmod': chmod}


def _member_mode(info):
    mode = (info.external_attr >> 16) & 0o7777
    return mode or 0o644


def package_context(package):
    """{name in the build context: ZipInfo} of the component zip (an open ZipFile) and the context's
    prefix: the zip's root, or its one top-level directory when the Dockerfile is there."""
    names = [info for info in package.infolist() if not info.is_dir()]
    prefix = ''
    if not any(info.filename == 'Dockerfile' for info in names):
        tops = {info.filename.split('/', 1)[0] for info in names if '/' in info.filename}
        if len(tops) == 1 and any(info.filename == '%s/Dockerfile' % list(tops)[0] for info in names):
            prefix = list(tops)[0] + '/'
    context = {}
    for info in names:
        if not info.filename.startswith(prefix):
            continue
        relative = posixpath.normpath(info.filename[len(prefix):])
        if relative.startswith('../') or relative == '..' or relative.startswith('/'):
            raise AssemblyError('the package names a file outside itself: %s' % ascii(info.filename))
        context[relative] = info
    return context, prefix


def layer_files(context, copies, workdir):
    """[(path in the image, ZipInfo, mode)] of the COPY lines, in Dockerfile order (a later COPY of the
    same path wins); a source the zip lacks is an AssemblyError naming what the zip holds."""
    files = {}
    for copy in copies:
        dest = copy['dest'] if copy['dest'].startswith('/') else posixpath.join(workdir or '/', copy['dest'])
        into_directory = copy['dest'].endswith('/') or len(copy['sources']) > 1
        for source in copy['sources']:
            source_path = posixpath.normpath(source.lstrip('/')) if source not in ('.', './') else '.'
            # A part '..' leaves; a name that only starts with dots ('..0') is a file of the package.
            if source_path == '..' or source_path.startswith('../'):
                raise AssemblyError('COPY %s leaves the package' % source)
            if source_path in context:
                target = posixpath.join(dest, posixpath.basename(source_path)) if into_directory else dest
                files[posixpath.normpath(target)] = (context[source_path], copy['chmod'])
                continue
            inside = sorted(name for name in context if source_path == '.' or name.startswith(source_path + '/'))
            if not inside:
                raise AssemblyError('the Dockerfile copies %s, which the package does not hold (it holds: %s)'
                                    % (source, ', '.join(sorted(context)) or 'nothing'))
            for name in inside:
                below = name if source_path == '.' else name[len(source_path) + 1:]
                files[posixpath.normpath(posixpath.join(dest, below))] = (context[name], copy['chmod'])
    return [(path, info, chmod if chmod is not None else _member_mode(info))
            for path, (info, chmod) in sorted(files.items())]


def _tar_bytes(entries):
    """A tar of (name, data or None for a directory, mode) with no time stamps or owners."""
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode='w', format=tarfile.PAX_FORMAT) as archive:
        for name, data, mode in entries:
            info = tarfile.TarInfo(name)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, '', ''
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, mode
                archive.addfile(info)
            else:
                info.size, info.mode = len(data), mode
                archive.addfile(info, io.BytesIO(data))
    return stream.getvalue()


def build_layer(package, files):
    """The layer tar of ``files`` (from ``layer_files``) read from the open zip: parent directories
    0755, each file with its mode."""
    directories, entries = set(), []
    for path, _info, _mode in files:
        parts = path.strip('/').split('/')[:-1]
        for depth in range(1, len(parts) + 1):
            directories.add('/'.join(parts[:depth]))
    for directory in sorted(directories):
        entries.append((directory + '/', None, 0o755))
    for path, info, mode in files:
        entries.append((path.strip('/'), package.read(info), mode))
    return _tar_bytes(entries)


def read_base(base):
    """{config (dict), layers [(member name, diff_id)]} of a base image archive (an open TarFile):
    a ``docker save`` archive (manifest.json) or an OCI image layout (index.json, blobs/), one image."""
    names = set(base.getnames())

    def read(name):
        member = base.extractfile(name)
        if member is None:
            raise AssemblyError('%s in the base archive is not a file' % name)
        return member.read()

    try:
        if 'manifest.json' in names:
            manifest = json.loads(read('manifest.json'))
            if not isinstance(manifest, list) or len(manifest) != 1:
                raise AssemblyError('the base archive holds %s images; save exactly one (the Dockerfile\'s FROM)'
                                    % (len(manifest) if isinstance(manifest, list) else 'no readable'))
            config = json.loads(read(manifest[0]['Config']))
            layer_names = list(manifest[0]['Layers'])
        elif 'index.json' in names:
            index = json.loads(read('index.json'))
            manifests = index.get('manifests') or []
            if len(manifests) != 1:
                raise AssemblyError('the base OCI layout lists %d manifests; save exactly one image of one '
                                    'architecture' % len(manifests))
            manifest = json.loads(read('blobs/' + manifests[0]['digest'].replace(':', '/')))
            if 'layers' not in manifest:
                raise AssemblyError('the base OCI layout names an image index, not an image; save the image of '
                                    'one architecture (docker save, or skopeo copy --override-arch)')
            config = json.loads(read('blobs/' + manifest['config']['digest'].replace(':', '/')))
            layer_names = ['blobs/' + layer['digest'].replace(':', '/') for layer in manifest['layers']]
        else:
            raise AssemblyError('the base archive is neither a `docker save` archive (manifest.json) nor an OCI '
                                'layout (index.json)')
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        if isinstance(error, AssemblyError):
            raise
        raise AssemblyError('the base archive cannot be read as an image: %s' % error)
    diff_ids = (config.get('rootfs') or {}).get('diff_ids') or []
    if len(diff_ids) != len(layer_names):
        raise AssemblyError('the base image\'s config lists %d layers and its manifest %d' % (len(diff_ids), len(layer_names)))
    missing = [name for name in layer_names if name not in names]
    if missing:
        raise AssemblyError('the base archive lacks its layer %s' % missing[0])
    return {'config': config, 'layers': list(zip(layer_names, diff_ids))}


def image_config(base_config, spec, layer_digest, arch, package_name):
    """The new image's config: the base's with the Dockerfile's ENV, WORKDIR, USER, ENTRYPOINT and CMD,
    and the COPY layer on top. Refuses a base of another architecture than the package's."""
    wanted = OCI_ARCHITECTURES.get(arch)
    if wanted is None:
        raise AssemblyError('architecture %s is not one of %s' % (arch, ', '.join(sorted(OCI_ARCHITECTURES))))
    have = base_config.get('architecture')
    if have != wanted:
        raise AssemblyError('the base image is for %s, the package for %s (%s); save the base image of %s'
                            % (have or 'no stated architecture', arch, wanted, wanted))
    config = json.loads(json.dumps(base_config))
    runtime = config.setdefault('config', {}) or {}
    config['config'] = runtime
    env = list(runtime.get('Env') or [])
    for key, value in spec['env']:
        env = [item for item in env if item.split('=', 1)[0] != key] + ['%s=%s' % (key, value)]
    runtime['Env'] = env
    if spec['workdir']:
        runtime['WorkingDir'] = spec['workdir']
    if spec['user']:
        runtime['User'] = spec['user']
    if spec['entrypoint'] is not None:
        runtime['Entrypoint'] = spec['entrypoint']
        if spec['cmd'] is None:
            runtime.pop('Cmd', None)
    if spec['cmd'] is not None:
        runtime['Cmd'] = spec['cmd']
    config['architecture'], config['os'] = wanted, 'linux'
    config.pop('created', None)
    config['rootfs'] = {'type': 'layers', 'diff_ids': list((base_config.get('rootfs') or {}).get('diff_ids') or [])
                        + ['sha256:' + layer_digest]}
    history = list(config.get('history') or [])
    history.append({'created_by': 'npu.ascend.image_assemble: the COPY lines of %s' % package_name,
                    'comment': 'RUN lines not replayed: %d' % len(spec['skipped'])})
    config['history'] = history
    return config


def plan_archive(package, base, image, arch, package_name, dockerfile='Dockerfile'):
    """Everything the archive of ``image`` is made of, from the open zip and the open base tar:
    {manifest (bytes), config (bytes), config_name, layer (bytes), layer_name, base_layers [(member,
    name in the archive)], skipped, files}. ``manifest`` identifies the archive's content, so an
    archive whose manifest.json equals it needs no rewrite."""
    context, _prefix = package_context(package)
    if dockerfile not in context:
        raise AssemblyError('the package holds no %s (it holds: %s)' % (dockerfile, ', '.join(sorted(context)) or 'nothing'))
    try:
        text = package.read(context[dockerfile]).decode('utf-8')
    except UnicodeDecodeError:
        raise AssemblyError('the package\'s %s is not UTF-8 text' % dockerfile)
    spec = parse_dockerfile(text)
    files = layer_files(context, spec['copies'], spec['workdir'])
    if not files:
        raise AssemblyError('the package\'s %s copies nothing into the image' % dockerfile)
    layer = build_layer(package, files)
    layer_digest = hashlib.sha256(layer).hexdigest()
    base_image = read_base(base)
    config = json.dumps(image_config(base_image['config'], spec, layer_digest, arch, package_name),
                        sort_keys=True, separators=(',', ':')).encode('utf-8')
    config_name = hashlib.sha256(config).hexdigest() + '.json'
    base_layers = [(member, '%s/layer.tar' % diff_id.split(':', 1)[-1]) for member, diff_id in base_image['layers']]
    layer_name = '%s/layer.tar' % layer_digest
    manifest = json.dumps([{'Config': config_name, 'RepoTags': [image],
                            'Layers': [name for _member, name in base_layers] + [layer_name]}],
                          sort_keys=True).encode('utf-8')
    return {'manifest': manifest, 'config': config, 'config_name': config_name, 'layer': layer,
            'layer_name': layer_name, 'base_layers': base_layers, 'skipped': spec['skipped'],
            'files': [path for path, _info, _mode in files], 'from': spec['base']}


def write_archive(plan, base, stream):
    """Writes the ``docker save`` archive of ``plan`` to the binary ``stream``, the base layers
    copied from the open base tar one at a time."""
    def add(archive, name, fileobj, size):
        info = tarfile.TarInfo(name)
        info.mtime, info.uid, info.gid, info.uname, info.gname, info.mode, info.size = 0, 0, 0, '', '', 0o644, size
        archive.addfile(info, fileobj)

    with tarfile.open(fileobj=stream, mode='w|', format=tarfile.PAX_FORMAT) as archive:
        written = set()
        for member, name in plan['base_layers']:
            if name in written:
                continue
            written.add(name)
            info = base.getmember(member)
            add(archive, name, base.extractfile(info), info.size)
        add(archive, plan['layer_name'], io.BytesIO(plan['layer']), len(plan['layer']))
        add(archive, plan['config_name'], io.BytesIO(plan['config']), len(plan['config']))
        add(archive, 'manifest.json', io.BytesIO(plan['manifest']), len(plan['manifest']))


def archive_manifest(stream):
    """manifest.json of an existing ``docker save`` archive (an open binary file), or None."""
    try:
        with tarfile.open(fileobj=stream, mode='r:') as archive:
            member = archive.extractfile('manifest.json')
            return member.read() if member is not None else None
    except (tarfile.TarError, KeyError, OSError):
        return None


def open_package(stream):
    """The component zip as a ZipFile, or an AssemblyError saying it is not one."""
    try:
        return zipfile.ZipFile(stream)
    except zipfile.BadZipFile as error:
        raise AssemblyError('the package is not a zip file (%s)' % error)


def open_base(stream):
    """The base archive as a TarFile, or an AssemblyError saying it is not one."""
    try:
        return tarfile.open(fileobj=stream, mode='r:*')
    except tarfile.TarError as error:
        raise AssemblyError('the base archive is not a tar file (%s)' % error)
