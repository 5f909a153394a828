# -*- coding: utf-8 -*-
"""sandbox/bytecode-cache/ascend_sandbox_bytecode_cache.py: the cache of code imported from zip files
(the nodes' and the test controller's), checked in a Python of its own per run, as each task is a
new process; without site (-S), so that a cache the venv itself installs stays out of the way."""

import importlib.util
import marshal
import os
import subprocess
import sys
import zipfile

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
NODE_PYTHON = os.path.join(REPO_ROOT, 'sandbox', 'bytecode-cache')

RUN = '''
import sys
sys.path.insert(0, {node_python!r})
import ascend_sandbox_bytecode_cache
ascend_sandbox_bytecode_cache.install({cache!r})
sys.path.insert(0, {archive!r})
import probe
print(probe.answer())
'''


def _archive(path, source):
    with zipfile.ZipFile(str(path), 'w') as archive:
        archive.writestr('probe.py', source)
    return str(path)


def _run(cache, archive):
    script = RUN.format(node_python=NODE_PYTHON, cache=str(cache), archive=archive)
    return subprocess.run([sys.executable, '-I', '-S', '-c', script], capture_output=True, text=True, check=False)


def _entries(cache):
    return sorted(name for name in os.listdir(str(cache))) if cache.exists() else []


def test_the_second_run_takes_the_code_the_first_compiled(tmp_path):
    cache = tmp_path / 'cache'
    archive = _archive(tmp_path / 'a.zip', 'def answer():\n    return 1\n')
    assert _run(cache, archive).stdout == '1\n'
    entries = _entries(cache)
    assert len(entries) == 1
    assert oct(os.stat(str(cache)).st_mode & 0o777) == '0o700'
    # The entry is what the second run executes: code of another source planted under its name is run.
    planted = compile('def answer():\n    return "from the cache"\n', 'probe.py', 'exec')
    (cache / entries[0]).write_bytes(marshal.dumps(planted))
    assert _run(cache, archive).stdout == 'from the cache\n'
    assert _entries(cache) == entries


def test_a_changed_source_is_compiled_again(tmp_path):
    cache = tmp_path / 'cache'
    assert _run(cache, _archive(tmp_path / 'a.zip', 'def answer():\n    return 1\n')).stdout == '1\n'
    assert _run(cache, _archive(tmp_path / 'b.zip', 'def answer():\n    return 2\n')).stdout == '2\n'
    assert len(_entries(cache)) == 2


def test_a_traceback_names_the_archive_of_the_run_that_failed(tmp_path):
    cache = tmp_path / 'cache'
    source = 'def answer():\n    def inner():\n        raise RuntimeError("probe")\n    return inner()\n'
    _run(cache, _archive(tmp_path / 'first.zip', source))
    failed = _run(cache, _archive(tmp_path / 'second.zip', source))
    assert 'RuntimeError: probe' in failed.stderr
    assert os.path.join(str(tmp_path), 'second.zip', 'probe.py') in failed.stderr
    assert 'first.zip' not in failed.stderr


@pytest.mark.parametrize('entry', [b'', b'\xff\x00 not marshal', marshal.dumps('a string, not code')])
def test_an_entry_that_is_not_code_is_compiled_again(tmp_path, entry):
    cache = tmp_path / 'cache'
    archive = _archive(tmp_path / 'a.zip', 'def answer():\n    return 1\n')
    _run(cache, archive)
    (name,) = _entries(cache)
    (cache / name).write_bytes(entry)
    assert _run(cache, archive).stdout == '1\n'


def test_a_directory_others_can_write_to_is_left_unused(tmp_path):
    cache = tmp_path / 'cache'
    cache.mkdir()
    os.chmod(str(cache), 0o777)
    assert _run(cache, _archive(tmp_path / 'a.zip', 'def answer():\n    return 1\n')).stdout == '1\n'
    assert _entries(cache) == []


def test_a_link_in_place_of_the_directory_is_left_unused(tmp_path):
    target = tmp_path / 'elsewhere'
    target.mkdir(mode=0o700)
    cache = tmp_path / 'cache'
    cache.symlink_to(target)
    assert _run(cache, _archive(tmp_path / 'a.zip', 'def answer():\n    return 1\n')).stdout == '1\n'
    assert _entries(target) == []


def test_the_node_overlay_puts_the_cache_where_the_nodes_python_starts_it(tmp_path):
    spec = importlib.util.spec_from_file_location('npu_ascend_sandbox_fleet_bytecode', os.path.join(REPO_ROOT, 'sandbox', 'fleet.py'))
    fleet = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fleet)
    root = tmp_path / 'node'
    root.mkdir()
    subprocess.run(['tar', '-C', str(root), '-xf', '-'], input=fleet.bytecode_cache_overlay(), check=True)
    site_packages = root / 'usr' / 'lib' / 'python3' / 'dist-packages'
    assert sorted(os.listdir(str(site_packages))) == ['ascend_sandbox_bytecode_cache.pth', 'ascend_sandbox_bytecode_cache.py']
    # As the node's site.py does with its dist-packages: the .pth line installs the cache at start.
    started = subprocess.run([sys.executable, '-I', '-S', '-c', 'import site, sys, zipimport; site.addsitedir(sys.argv[1]); '
                              'print(zipimport._compile_source.__name__)', str(site_packages)],
                             capture_output=True, text=True, check=True)
    assert started.stdout == 'cached_compile_source\n'


@pytest.mark.skipif(os.geteuid() != 0, reason='giving the directory to another user takes root')
def test_a_directory_of_another_user_is_left_unused(tmp_path):
    cache = tmp_path / 'cache'
    cache.mkdir(mode=0o700)
    os.chown(str(cache), 65534, 65534)
    assert _run(cache, _archive(tmp_path / 'a.zip', 'def answer():\n    return 1\n')).stdout == '1\n'
    assert _entries(cache) == []


def test_code_compiled_without_asserts_is_not_given_to_a_run_with_them(tmp_path):
    cache = tmp_path / 'cache'
    archive = _archive(tmp_path / 'a.zip', 'def answer():\n    assert False, "asserted"\n    return "no assert"\n')
    script = RUN.format(node_python=NODE_PYTHON, cache=str(cache), archive=archive)
    optimized = subprocess.run([sys.executable, '-I', '-S', '-O', '-c', script], capture_output=True, text=True, check=False)
    assert optimized.stdout == 'no assert\n'
    assert 'AssertionError: asserted' in _run(cache, archive).stderr
    assert len(_entries(cache)) == 2
