"""tests/venv_cache.py: a venv is made once per requirements file's content in the machine's cache, linked
from the checkout, made again when its making was interrupted, and its Python keeps the bytecode cache
without the checkout it came from. Real venvs from a requirements file with no package (pip needs no
index for it)."""

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import venv_cache  # noqa: E402 pylint: disable=wrong-import-position


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(venv_cache, 'VENVS', tmp_path / 'machine' / 'venvs')
    monkeypatch.setattr(venv_cache, 'BYTECODE', tmp_path / 'machine' / 'bytecode')
    return tmp_path


@pytest.fixture
def quick(cache, monkeypatch):
    """venv_cache with venvs made without pip (a tenth of the time); the first test makes real ones."""
    real_make = venv_cache._make

    def make_without_pip(venv, requirements, say):
        say('venv: making %s' % venv)
        subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True)
        (venv / venv_cache.COMPLETE).write_text('')
    monkeypatch.setattr(venv_cache, '_make', make_without_pip)
    assert real_make is not make_without_pip
    return cache


def _requirements(directory, text='# nothing pinned\n'):
    path = directory / 'requirements.txt'
    path.write_text(text)
    return path


def _made(lines):
    return [line for line in lines if line.startswith('venv: making ')]


def test_a_second_checkout_links_the_venv_the_first_made(cache):
    said = []
    first = venv_cache.ensure(_requirements(cache), cache / 'one' / '.venv', say=said.append)
    second = venv_cache.ensure(_requirements(cache), cache / 'two' / '.venv', say=said.append)
    assert len(_made(said)) == 1
    assert first.is_symlink() and second.is_symlink()
    assert os.readlink(str(first)) == os.readlink(str(second))
    assert Path(os.readlink(str(first))).parent == cache / 'machine' / 'venvs'
    # pip made it from the file, and its Python runs through the link.
    assert (first / venv_cache.COMPLETE).read_text().strip() == venv_cache.hashlib.sha256(
        _requirements(cache).read_bytes()).hexdigest()
    assert subprocess.run([str(first / 'bin' / 'python'), '-c', 'import pip, sys; print(sys.prefix)'],
                          check=True, capture_output=True, text=True).stdout.strip() == str(first)


def test_a_changed_requirements_file_is_a_venv_of_its_own(quick):
    cache = quick
    said = []
    first = os.readlink(str(venv_cache.ensure(_requirements(cache), cache / '.venv', say=said.append)))
    second = os.readlink(str(venv_cache.ensure(_requirements(cache, '# pins changed\n'), cache / '.venv',
                                               say=said.append)))
    assert first != second and len(_made(said)) == 2
    # Asked for a moment ago: another checkout may still use it.
    assert Path(first).is_dir()


def test_a_venv_nobody_asked_for_in_two_weeks_is_removed(quick):
    cache = quick
    old = Path(os.readlink(str(venv_cache.ensure(_requirements(cache), cache / '.venv', say=list().append))))
    weeks_ago = time.time() - (venv_cache.PRUNE_AFTER_DAYS + 1) * 86400
    os.utime(str(old / venv_cache.COMPLETE), (weeks_ago, weeks_ago))
    other_file = cache / 'other'
    other_file.mkdir()
    unrelated = Path(os.readlink(str(venv_cache.ensure(_requirements(other_file, '# x\n').rename(
        other_file / 'requirements-2.16.txt'), cache / 'r', say=list().append))))
    os.utime(str(unrelated / venv_cache.COMPLETE), (weeks_ago, weeks_ago))
    venv_cache.ensure(_requirements(cache, '# pins changed\n'), cache / '.venv', say=list().append)
    assert not old.exists()
    # Another requirements file's venv is not this one's to judge.
    assert unrelated.is_dir()


def test_a_venv_whose_making_was_interrupted_is_made_again(quick):
    cache = quick
    link = venv_cache.ensure(_requirements(cache), cache / '.venv', say=list().append)
    (link / venv_cache.COMPLETE).unlink()
    (link / 'half-installed').write_text('')
    said = []
    venv_cache.ensure(_requirements(cache), cache / '.venv', say=said.append)
    assert len(_made(said)) == 1
    assert not (link / 'half-installed').exists() and (link / venv_cache.COMPLETE).exists()


def test_a_venv_directory_an_older_make_left_is_replaced_by_the_link(quick):
    cache = quick
    (cache / '.venv' / 'bin').mkdir(parents=True)
    link = venv_cache.ensure(_requirements(cache), cache / '.venv', say=list().append)
    assert link.is_symlink() and (link / 'bin' / 'python').exists()


def test_the_venv_keeps_bytecode_without_the_checkout_it_came_from(quick):
    cache = quick
    link = venv_cache.ensure(_requirements(cache), cache / '.venv', say=list().append)
    # Run from elsewhere, with no path into the checkout: the .pth's module is the venv's own copy.
    answer = subprocess.run(
        [str(link / 'bin' / 'python'), '-c', 'import ascend_sandbox_bytecode_cache as m; print(m.__file__)'],
        check=True, capture_output=True, text=True, cwd=str(cache), env={'PATH': '/usr/bin:/bin'}).stdout.strip()
    assert answer.startswith(str(link) + '/lib/')
    # What it compiles from a zip is kept in the machine's cache.
    with zipfile.ZipFile(str(cache / 'shipped.zip'), 'w') as archive:
        archive.writestr('shipped_helper.py', 'ANSWER = 42\n')
    subprocess.run([str(link / 'bin' / 'python'), '-c', 'import sys; sys.path.insert(0, %r); import shipped_helper'
                    % str(cache / 'shipped.zip')], check=True, cwd=str(cache), env={'PATH': '/usr/bin:/bin'})
    assert os.listdir(str(cache / 'machine' / 'bytecode'))


def test_the_venv_of_another_python_is_another_venv(cache):
    requirements = _requirements(cache)
    assert venv_cache.venv_path(requirements, 'Python 3.11.2\n/usr') != venv_cache.venv_path(
        requirements, 'Python 3.12.1\n/usr')
