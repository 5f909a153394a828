# -*- coding: utf-8 -*-
"""Property-based tests of the containerd editor: generated configs round-trip, present is idempotent, junk is refused."""

import pytest

tomlkit = pytest.importorskip('tomlkit')
hypothesis = pytest.importorskip('hypothesis')

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_config, containerd_layout, toml_editor  # noqa: E402

BINARY = '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'
QUICK = settings(max_examples=40, deadline=5000, suppress_health_check=[HealthCheck.too_slow])

PLUGIN_BY_LAYOUT = {None: 'cri', 1: 'cri', 2: 'io.containerd.grpc.v1.cri', 3: 'io.containerd.cri.v1.runtime',
                    4: 'io.containerd.cri.v1.runtime'}
KEY = st.text(alphabet='abcdefghijklmnopqrstuvwxyz_', min_size=1, max_size=10).filter(
    lambda key: key not in ('version', 'plugins', 'imports', 'runtimes', 'default_runtime_name', 'options'))
SCALAR = st.one_of(st.integers(-1000, 1000), st.booleans(),
                   st.text(alphabet='abcdefghijklmnopqrstuvwxyz/.-:0123456789 ', max_size=20).map(lambda text: '"%s"' % text))
COMMENT = st.one_of(st.just(''), st.text(alphabet='abcdefghij ,.', max_size=20).map(lambda text: '  # ' + text))


def _scalar(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value)


@st.composite
def configs(draw):
    """A containerd config as an operator or a tool writes it: any layout, indentation, comments, other tables."""
    version = draw(st.sampled_from([None, 1, 2, 3, 4]))
    plugin = PLUGIN_BY_LAYOUT[version]
    # containerd 2.x files headed `version = 2` keep the 2.x runtime table.
    if version == 2 and draw(st.booleans()):
        plugin = 'io.containerd.cri.v1.runtime'
    indent = draw(st.sampled_from(['', '  ', '    ', '\t']))
    lines = []
    if draw(st.booleans()):
        lines.append('# ' + draw(st.text(alphabet='abcdefgh ', max_size=30)))
    if version is not None:
        lines.append('version = %d%s' % (version, draw(COMMENT)))
    for key, value in draw(st.dictionaries(KEY, SCALAR, max_size=3)).items():
        lines.append('%s = %s%s' % (key, _scalar(value), draw(COMMENT)))
    if draw(st.booleans()):
        lines.append('')
    containerd = 'plugins."%s".containerd' % plugin
    if draw(st.booleans()):
        lines.append('[%s]' % containerd)
        if draw(st.booleans()):
            default = draw(st.sampled_from(['runc', 'nvidia', 'ascend']))
            quote = draw(st.sampled_from(['"', "'"]))
            lines.append('%sdefault_runtime_name = %s%s%s%s' % (indent, quote, default, quote, draw(COMMENT)))
        for key, value in draw(st.dictionaries(KEY, SCALAR, max_size=2)).items():
            lines.append('%s%s = %s' % (indent, key, _scalar(value)))
    runtimes = draw(st.lists(st.sampled_from(['runc', 'nvidia', 'ascend']), unique=True, max_size=3))
    for name in runtimes:
        if draw(st.booleans()):
            lines.append('')
        lines.append('%s[%s.runtimes.%s]' % (indent, containerd, name))
        if draw(st.booleans()):
            lines.append('%s%sruntime_type = "io.containerd.runc.v2"%s' % (indent, indent, draw(COMMENT)))
        if draw(st.booleans()):
            lines.append('%s%s[%s.runtimes.%s.options]' % (indent, indent, containerd, name))
            binary = draw(st.sampled_from(['BinaryName', 'binaryName', 'binaryname', None]))
            cgroup = draw(st.sampled_from(['SystemdCgroup', 'systemdCgroup', None]))
            if cgroup:
                lines.append('%s%s%s = %s' % (indent * 3, '', cgroup, _scalar(draw(st.booleans()))))
            if binary:
                lines.append('%s%s = "/usr/bin/%s"%s' % (indent * 3, binary, name, draw(COMMENT)))
    if draw(st.booleans()):
        lines.append('[%s]' % draw(st.sampled_from(['grpc', 'debug', 'metrics'])))
        for key, value in draw(st.dictionaries(KEY, SCALAR, max_size=2)).items():
            lines.append('%s%s = %s' % (indent, key, _scalar(value)))
    text = '\n'.join(lines)
    return text + '\n' if draw(st.booleans()) else text


def _spellings(runtime):
    keys = [key.lower() for key in (runtime or {}).get('options', {})]
    return len(keys) == len(set(keys))


def _add(text, *args):
    """add_runtime, or None for a layout tomlkit itself does not write back as read (refused, file untouched)."""
    try:
        return containerd_config.add_runtime(text, *args)
    except containerd_config.ContainerdConfigError as error:
        assert toml_editor.ROUND_TRIP_REFUSAL in str(error)
        return None


@QUICK
@given(configs(), st.booleans())
def test_present_is_idempotent_and_absent_restores_the_bytes(text, make_default):
    added = _add(text, 'ascend', BINARY, make_default)
    if added is None:
        return
    new, record, _info = added
    default_name, runtime = containerd_layout.effective_runtime(new, 'ascend')
    assert containerd_layout.option_value(runtime['options'], 'BinaryName') == BINARY
    assert _spellings(runtime)
    assert (default_name == 'ascend') == make_default
    again, record_again, _info = containerd_config.add_runtime(new, 'ascend', BINARY, make_default, record)
    assert again == new and record_again == record
    restored, info = containerd_config.remove_runtime(new, 'ascend', record)
    assert restored == text
    assert info['runtime_kept'] is False


@QUICK
@given(configs())
def test_present_not_default_then_default_then_absent_restores_the_bytes(text):
    added = _add(text, 'ascend', BINARY, False)
    if added is None:
        return
    first, record, _info = added
    second, record, _info = containerd_config.add_runtime(first, 'ascend', '/opt/other', True, record)
    assert containerd_layout.effective_runtime(second, 'ascend')[0] == 'ascend'
    assert containerd_config.remove_runtime(second, 'ascend', record)[0] == text


@QUICK
@given(st.one_of(st.binary(max_size=200).map(lambda raw: raw.decode('latin-1')),
                 st.text(max_size=200),
                 st.text(alphabet='[]{}="\'.,#\n version2plugins', max_size=120)))
def test_junk_gives_a_clean_error_or_a_valid_round_trip(text):
    try:
        new, record, _info = containerd_config.add_runtime(text, 'ascend', BINARY, True)
    except containerd_config.ContainerdConfigError:
        return
    toml_editor.parse_config(new)
    assert containerd_config.remove_runtime(new, 'ascend', record)[0] == text


@QUICK
@given(configs().filter(lambda text: containerd_layout.describe(text)[0] >= 2))
def test_import_round_trips(text):
    if tomlkit.dumps(tomlkit.parse(text)) != text:
        return
    new, record = containerd_config.add_import(text, '/etc/containerd/conf.d/99-npu-ascend.toml')
    assert '/etc/containerd/conf.d/99-npu-ascend.toml' in containerd_layout.imports_of(new)
    assert containerd_config.add_import(new, '/etc/containerd/conf.d/99-npu-ascend.toml')[0] == new
    assert containerd_config.remove_import(new, '/etc/containerd/conf.d/99-npu-ascend.toml', record) == text


def test_a_layout_tomlkit_would_reindent_is_refused_untouched():
    text = '  [plugins."cri".containerd.runtimes.runc]\n  [plugins."cri".containerd.runtimes.nvidia]\n'
    with pytest.raises(containerd_config.ContainerdConfigError, match='byte for byte'):
        containerd_config.add_runtime(text, 'ascend', BINARY, True)
    with pytest.raises(containerd_config.ContainerdConfigError, match='byte for byte'):
        containerd_config.remove_runtime(text, 'nvidia')
    # One such header reads back as written, but a runtime added beside it would not: refused as well.
    with pytest.raises(containerd_config.ContainerdConfigError, match='once the runtime is added'):
        containerd_config.add_runtime('  [plugins."cri".containerd.runtimes.runc]\n', 'ascend', BINARY, False)
