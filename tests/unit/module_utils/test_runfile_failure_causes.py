# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.npu.ascend.plugins.module_utils.packages import installer_output

MAKESELF_ONLY = (
    'Verifying archive integrity...  100%   SHA256 checksums are OK. All good.\n'
    'Uncompressing ASCEND DOCKER RUNTIME RUN PACKAGE  100%\n'
)


def test_an_installer_that_says_nothing_is_not_blamed_on_makeself_progress():
    result = installer_output.interpret_result('docker_runtime', 'install', 1, MAKESELF_ONLY)
    assert not result['ok']
    assert result['cause'] == 'the installer exited with rc=1 without printing a reason'
    assert 'checksums' not in result['message']
    assert '--check' in result['fix']


def test_the_last_line_of_the_installer_itself_is_the_cause():
    output = MAKESELF_ONLY + 'install ascend-docker-runtime: unsupported scene\n'
    result = installer_output.interpret_result('docker_runtime', 'install', 1, output)
    assert result['cause'] == 'install ascend-docker-runtime: unsupported scene'


def test_cann_free_space_check_gets_the_disk_fix():
    output = '[ERROR] The free space of / is less than 10G, please clean up the disk and try again.\n'
    result = installer_output.interpret_result('kernels', 'install', 1, output)
    assert result['cause'].startswith('The free space of / is less than 10G')
    assert result['fix'].startswith('free disk space')
