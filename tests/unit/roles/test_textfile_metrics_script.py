# -*- coding: utf-8 -*-
"""The node-side program of the textfile_metrics role, installed as the role installs it (the
script next to copies of npu_smi.py and npu_metrics.py) and run with a stand-in npu-smi that
prints a real sample, fails, or is missing."""

import os
import shutil
import stat
import subprocess
import sys

import pytest
import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLE = os.path.join(REPO_ROOT, 'roles', 'textfile_metrics')
MODULE_UTILS = os.path.join(REPO_ROOT, 'plugins', 'module_utils', 'hardware')
SAMPLES = os.path.join(REPO_ROOT, 'tests', 'fixtures', 'samples', 'npu-smi')
SYNTHETIC = os.path.join(REPO_ROOT, 'tests', 'unit', 'fixtures', 'npu_smi_synthetic')


def role_vars():
    with open(os.path.join(ROLE, 'vars', 'main.yml')) as handle:
        return yaml.safe_load(handle)


@pytest.fixture
def install_dir(tmp_path):
    """The install directory as the role fills it."""
    target = tmp_path / 'install'
    target.mkdir()
    variables = role_vars()
    shutil.copy(os.path.join(ROLE, 'files', variables['__textfile_metrics_script']), str(target))
    for name in variables['__textfile_metrics_module_utils']:
        shutil.copy(os.path.join(MODULE_UTILS, name), str(target))
    return target


def fake_npu_smi(directory, output_file, exit_code=0, record_env=None):
    """An executable that prints ``output_file`` for ``info`` and exits with ``exit_code``."""
    path = directory / 'npu-smi'
    lines = ['#!/bin/sh', '[ "$1" = info ] && [ $# -eq 1 ] || { echo "bad args: $*"; exit 2; }']
    if record_env:
        lines.append('echo "LC_ALL=$LC_ALL" > "%s"' % record_env)
    lines += ['cat "%s"' % output_file, 'exit %d' % exit_code]
    path.write_text('\n'.join(lines) + '\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def run(install_dir, *args):
    environment = dict(os.environ, LC_ALL='en_US.UTF-8', PYTHONDONTWRITEBYTECODE='')
    environment.pop('PYTHONPATH', None)
    return subprocess.run([sys.executable, str(install_dir / role_vars()['__textfile_metrics_script'])] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False,
                          env=environment, cwd='/')


def read_series(path):
    series = {}
    for line in path.read_text().splitlines():
        if line.startswith('#'):
            continue
        key, value = line.rsplit(' ', 1)
        series[key] = float(value)
    return series


def test_writes_the_chips_of_a_real_sample(tmp_path, install_dir):
    output = tmp_path / 'textfile' / 'npu_ascend.prom'
    output.parent.mkdir()
    env_record = tmp_path / 'env'
    npu_smi = fake_npu_smi(tmp_path, os.path.join(SAMPLES, '910B4_25.0.rc1.1_info.txt'), record_env=env_record)
    completed = run(install_dir, '--output', str(output), '--npu-smi', npu_smi)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ''
    series = read_series(output)
    assert series['npu_ascend_textfile_scrape_success'] == 1
    assert series['machine_npu_nums'] == 8
    assert series['npu_chip_info_health_status{id="7",npu="7",chip="0",model="910B4",bus="0000:42:00.0"}'] == 1
    assert series['npu_chip_info_power{id="0",npu="0",chip="0",model="910B4",bus="0000:C1:00.0"}'] == 87.2
    assert series['npu_ascend_textfile_scrape_timestamp_seconds'] > 1.6e9
    # npu-smi ran in the C locale whatever the caller's; only the .prom file is left behind.
    assert env_record.read_text() == 'LC_ALL=C\n'
    assert os.listdir(str(output.parent)) == ['npu_ascend.prom']
    assert stat.S_IMODE(output.stat().st_mode) == 0o644
    # Nothing compiled next to the installed files (state=absent removes a known set).
    assert sorted(os.listdir(str(install_dir))) == sorted(
        [role_vars()['__textfile_metrics_script']] + role_vars()['__textfile_metrics_module_utils'])


def test_npu_smi_failure_is_written_not_raised(tmp_path, install_dir):
    output = tmp_path / 'npu_ascend.prom'
    output.write_text('machine_npu_nums 8\n')
    npu_smi = fake_npu_smi(tmp_path, os.path.join(SYNTHETIC, 'error_dcmi_-8005.txt'), exit_code=1)
    completed = run(install_dir, '--output', str(output), '--npu-smi', npu_smi)
    assert completed.returncode == 0
    assert '-8005' in completed.stderr
    series = read_series(output)
    assert series['npu_ascend_textfile_scrape_success'] == 0
    assert series['npu_ascend_textfile_npu_smi_error_code'] == -8005
    # The last good values do not linger.
    assert 'machine_npu_nums' not in series


def test_unparsable_output_and_nonzero_exit_are_failures(tmp_path, install_dir):
    garbage = tmp_path / 'garbage.txt'
    garbage.write_text('something that is not an npu-smi table\n')
    output = tmp_path / 'npu_ascend.prom'
    completed = run(install_dir, '--output', str(output), '--npu-smi', fake_npu_smi(tmp_path, str(garbage)))
    assert completed.returncode == 0
    assert 'cannot read the output' in completed.stderr
    series = read_series(output)
    assert sorted(series) == ['npu_ascend_textfile_scrape_success', 'npu_ascend_textfile_scrape_timestamp_seconds']
    assert series['npu_ascend_textfile_scrape_success'] == 0

    npu_smi = fake_npu_smi(tmp_path, os.path.join(SAMPLES, '910B4_25.0.rc1.1_info.txt'), exit_code=3)
    completed = run(install_dir, '--output', str(output), '--npu-smi', npu_smi)
    assert 'exited with 3' in completed.stderr
    assert read_series(output)['npu_ascend_textfile_scrape_success'] == 0


def test_missing_npu_smi(tmp_path, install_dir):
    output = tmp_path / 'npu_ascend.prom'
    completed = run(install_dir, '--output', str(output), '--npu-smi', str(tmp_path / 'nowhere' / 'npu-smi'))
    assert completed.returncode == 0
    assert 'cannot run' in completed.stderr
    assert read_series(output)['npu_ascend_textfile_scrape_success'] == 0


def test_replaces_the_file_atomically(tmp_path, install_dir):
    output = tmp_path / 'npu_ascend.prom'
    output.write_text('old\n')
    with open(str(output)) as reader:
        npu_smi = fake_npu_smi(tmp_path, os.path.join(SAMPLES, '310P3_25.5.2_info.txt'))
        assert run(install_dir, '--output', str(output), '--npu-smi', npu_smi).returncode == 0
        # A reader that had the old file open keeps reading the old file: it was renamed over.
        assert reader.read() == 'old\n'
    assert read_series(output)['machine_npu_nums'] == 1


def test_unwritable_directory_fails(tmp_path, install_dir):
    npu_smi = fake_npu_smi(tmp_path, os.path.join(SAMPLES, '910B4_25.0.rc1.1_info.txt'))
    completed = run(install_dir, '--output', str(tmp_path / 'missing' / 'npu_ascend.prom'), '--npu-smi', npu_smi)
    assert completed.returncode == 1
    assert 'cannot write' in completed.stderr


def test_the_role_installs_what_the_script_imports():
    with open(os.path.join(ROLE, 'files', role_vars()['__textfile_metrics_script'])) as handle:
        imported = set(line.split()[1] + '.py' for line in handle if line.startswith('import npu_'))
    assert imported == set(role_vars()['__textfile_metrics_module_utils'])
