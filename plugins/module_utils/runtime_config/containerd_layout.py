# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a containerd config keeps its CRI runtimes, by the config's version; pure, kept free of Ansible.

Where the runtime goes depends on the config's top-level ``version`` (as the Ascend Docker Runtime's
installer in MindCluster does; docs/huawei-sources.md):

* 1 -> ``plugins.cri``, 2 -> ``plugins."io.containerd.grpc.v1.cri"``,
  3 and 4 (containerd 2.x; ``config default`` of 2.4 writes 4) -> ``plugins."io.containerd.cri.v1.runtime"``;
* a file *without* ``version`` is read by containerd as version 1 (checked against the real
  containerd 1.6, 1.7 and 2.x: tables under ``io.containerd.grpc.v1.cri`` in such a file are
  ignored), so it is edited as version 1. Huawei's installer writes the version 2 table there,
  which containerd never reads.

The runtime table ``<cri>.containerd.runtimes.<name>`` is a copy of the ``runc`` runtime table
(so ``runtime_type``, ``options.SystemdCgroup`` and the rest follow the node's own settings), with
``options.BinaryName`` pointing at the wrapper binary. Without a ``runc`` table Huawei's defaults
apply: ``runtime_type = "io.containerd.runc.v2"`` and ``options.SystemdCgroup = true``.

A version 2 file can also hold the tables of containerd 2.x (``io.containerd.cri.v1.runtime``):
containerd 2.x reads such a file, migrates its ``io.containerd.grpc.v1.cri`` part and keeps the 2.x
tables as they are, so the runtime goes where the file's runtimes live (``_cri_plugin_of``).

The options of a runtime are decoded by containerd into the runc shim's options struct, which
matches keys case-insensitively (``binaryName`` is ``BinaryName``): an option is edited in the
spelling the file has, never added in a second one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import toml_editor

CRI_PLUGIN_BY_VERSION = {
    1: 'cri',
    2: 'io.containerd.grpc.v1.cri',
    3: 'io.containerd.cri.v1.runtime',
    # containerd 2.2 and later write version 4; the CRI runtime table did not move.
    4: 'io.containerd.cri.v1.runtime',
}

# The CRI plugin tables containerd reads runtimes from, per config version. containerd 2.x reads a
# version 2 file and migrates its io.containerd.grpc.v1.cri part; 2.x tables there stay as they are
# (checked with containerd 2.4: a runtime under grpc.v1.cri next to a cri.v1.runtime table is lost).
CRI_PLUGINS_READ_BY_VERSION = {
    1: ('cri',),
    2: ('io.containerd.grpc.v1.cri', 'io.containerd.cri.v1.runtime'),
    3: ('io.containerd.cri.v1.runtime',),
    4: ('io.containerd.cri.v1.runtime',),
}

# Options containerd decodes case-insensitively into the runc shim's options (facts in docs/container-runtime.md).
BINARY_NAME_OPTION = 'BinaryName'
SYSTEMD_CGROUP_OPTION = 'SystemdCgroup'

# containerd treats a config without `version` as version 1.
VERSION_WHEN_MISSING = 1
DEFAULT_RUNTIME_TYPE = 'io.containerd.runc.v2'

# What Huawei's uninstall sets `default_runtime_name` back to when nothing better is known.
FALLBACK_DEFAULT_RUNTIME = 'runc'
TEMPLATE_RUNTIME = 'runc'


def _unsupported_version(version):
    known = ', '.join(str(known_version) for known_version in sorted(CRI_PLUGIN_BY_VERSION))
    return toml_editor.TomlEditError('unsupported containerd config version %r (known: %s)' % (version, known))


def minimal_config(version):
    """Text of a config holding nothing but its version, the start of a drop-in file."""
    if version not in CRI_PLUGIN_BY_VERSION:
        raise _unsupported_version(version)
    return 'version = %d\n\n' % version


def holds_only_version(text):
    """Whether a config says nothing but its version: what is left of a drop-in file once its runtime
    is removed (tomlkit releases differ in the blank lines they leave, so bytes cannot tell)."""
    return set(toml_editor.parse_config(text).keys()) <= {'version'}


def config_version(document):
    """The version containerd will read the document as: 1, 2, 3 or 4."""
    if 'version' not in document:
        return VERSION_WHEN_MISSING
    version = toml_editor.plain(document['version'])
    if isinstance(version, float) and version in CRI_PLUGIN_BY_VERSION:
        # containerd decodes `version` into an integer and refuses to start on a float.
        raise toml_editor.TomlEditError('version = %s is a float; containerd reads the version as an integer and '
                                        'refuses this file. Fix: write it as version = %d'
                                        % (document['version'].as_string().strip(), int(version)))
    if isinstance(version, bool) or not isinstance(version, int) or version not in CRI_PLUGIN_BY_VERSION:
        raise _unsupported_version(version)
    return version


def cri_plugin(version):
    return CRI_PLUGIN_BY_VERSION[version]


def _cri_plugin_of(document, version):
    """The CRI plugin table the runtimes of ``document`` live in, for the containerd reading ``version``.

    A version 2 file written for containerd 2.x holds ``io.containerd.cri.v1.runtime`` tables under
    its ``version = 2`` header; containerd 2.x honours them there, so that is where runtimes go.
    A file holding a ``containerd`` table under two of them is refused: which one wins depends on
    containerd's migration, and either choice could register a runtime containerd never reads.
    """
    candidates = CRI_PLUGINS_READ_BY_VERSION[version]
    plugins = document.get('plugins') if 'plugins' in document else None
    if len(candidates) == 1 or not toml_editor.is_table(plugins):
        return cri_plugin(version)
    present = [name for name in candidates if toml_editor.is_table(plugins.get(name))]
    holding = [name for name in present if 'containerd' in plugins[name]]
    if len(holding) > 1:
        raise toml_editor.TomlEditError(
            'the file says version %d but holds containerd runtime tables under both %s; containerd 2.x migrates '
            'one over the other, so a runtime in either may be lost. Fix: run `containerd config migrate` and keep '
            'one of them' % (version, ' and '.join('plugins."%s".containerd' % name for name in holding)))
    if holding:
        return holding[0]
    # No runtimes yet: a file with containerd 2.x tables is a containerd 2.x file.
    return candidates[-1] if candidates[-1] in present else cri_plugin(version)


def describe(text):
    """Version and CRI plugin table of a config text, as ``(version, plugin)``."""
    document = toml_editor.parse_config(text)
    version = config_version(document)
    return version, _cri_plugin_of(document, version)


def option_key(options, option):
    """The spelling ``options`` has for ``option`` (containerd matches option keys case-insensitively).

    Returns ``option`` itself when the table has no spelling of it; a table with two spellings of
    one option is refused, since which one containerd uses depends on its decoder's key order.
    """
    spellings = [key for key in options.keys() if isinstance(key, str) and key.lower() == option.lower()]
    if len(spellings) > 1:
        raise toml_editor.TomlEditError('the options %s are one option to containerd (it matches option keys '
                                        'case-insensitively); Fix: keep one of them' % ' and '.join(sorted(spellings)))
    return spellings[0] if spellings else option


def option_value(options, option):
    """The value of ``option`` in a plain or tomlkit options table, whatever its letter case; None when unset."""
    if not toml_editor.is_table(options) and not isinstance(options, dict):
        return None
    key = option_key(options, option)
    return toml_editor.plain(options.get(key))


def runtime_values(template, binary_name):
    values = copy.deepcopy(toml_editor.plain(template)) if template is not None else {}
    if not isinstance(values, dict):
        values = {}
    values.setdefault('runtime_type', DEFAULT_RUNTIME_TYPE)
    options = values.get('options')
    if not isinstance(options, dict):
        options = {}
        values['options'] = options
    if template is None:
        options.setdefault(SYSTEMD_CGROUP_OPTION, True)
    # A template spelling it `binaryName` (kubespray) gets its own spelling set, not a second key.
    options[option_key(options, BINARY_NAME_OPTION)] = binary_name
    # The options table comes last, as in containerd's own output.
    values['options'] = values.pop('options')
    return values


def runtimes_path(document):
    version = config_version(document)
    plugin = _cri_plugin_of(document, version)
    return version, plugin, ['plugins', plugin, 'containerd']


def template_runtime(text):
    """The ``runc`` runtime table of config ``text`` as plain values, or None when it has none."""
    document = toml_editor.parse_config(text)
    _version, _plugin, containerd_path = runtimes_path(document)
    runtimes = toml_editor.table_at(document, containerd_path + ['runtimes'])
    template = runtimes.get(TEMPLATE_RUNTIME) if runtimes is not None else None
    return toml_editor.plain(template) if toml_editor.is_table(template) else None


def huawei_copy(runtime, runtimes):
    """Whether a runtime table holds nothing beyond what Huawei's installer writes: a copy of ``runc``
    (or, without one, the installer's defaults) with a ``BinaryName`` of its own."""
    values = toml_editor.plain(runtime)
    if not isinstance(values, dict):
        return False
    model = runtime_values(runtimes.get(TEMPLATE_RUNTIME) if toml_editor.is_table(runtimes.get(TEMPLATE_RUNTIME)) else None, '')

    def without_binary(plain):
        plain = copy.deepcopy(plain)
        options = plain.get('options')
        if isinstance(options, dict):
            for key in [key for key in options if key.lower() == BINARY_NAME_OPTION.lower()]:
                del options[key]
        return plain
    return without_binary(values) == without_binary(model)


def effective_runtime(text, name):
    """What containerd would read for runtime ``name``: ``(default_runtime_name, runtime dict or None)``."""
    document = toml_editor.parse_config(text)
    containerd = toml_editor.table_at(document, runtimes_path(document)[2])
    if containerd is None:
        return None, None
    runtimes = containerd.get('runtimes')
    runtime = toml_editor.plain(runtimes.get(name)) if toml_editor.is_table(runtimes) else None
    return toml_editor.plain(containerd.get('default_runtime_name')), runtime


IMPORTS_KEY = 'imports'


def imports_of(text):
    """The files config ``text`` imports, as written (containerd resolves relative ones from its directory)."""
    document = toml_editor.parse_config(text)
    imports = toml_editor.plain(document.get(IMPORTS_KEY)) if IMPORTS_KEY in document else []
    return list(imports) if isinstance(imports, list) else []
