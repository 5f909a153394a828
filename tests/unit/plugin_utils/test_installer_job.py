# -*- coding: utf-8 -*-
"""The background job that installs a role's staged packages (plugin_utils/installer_job.py)."""

import pytest

from ansible_collections.npu.ascend.plugins.plugin_utils.installer_job import installer_job

STAGED = {
    'driver': {'path': '/var/cache/npu_ascend/packages/driver.run', 'sha256': 'a' * 64, 'version': '25.0.rc1.1'},
    'firmware': {'path': '/var/cache/npu_ascend/packages/firmware.run', 'sha256': 'b' * 64, 'version': '7.7.0.1.231'},
}
TIMEOUTS = {'driver': 1800, 'firmware': 3600}


def test_the_installers_keep_the_given_order_and_each_its_own_package_and_timeout():
    job = installer_job(STAGED, ['firmware', 'driver'], TIMEOUTS, 10)
    assert job['installers'] == [
        {'src': STAGED['firmware']['path'], 'component': 'firmware', 'checksum': 'b' * 64, 'timeout': 3600},
        {'src': STAGED['driver']['path'], 'component': 'driver', 'checksum': 'a' * 64, 'timeout': 1800}]
    assert job['label'] == 'firmware 7.7.0.1.231, driver 25.0.rc1.1'


def test_the_job_lasts_as_long_as_its_installers_may_together_and_the_wait_as_long_as_the_job():
    # One installer: what each role's single job had (six times the timeout, the lock timeout and 600 s).
    single = installer_job(STAGED, ['driver'], TIMEOUTS, 10)
    assert single['async_seconds'] == 1800 * 6 + 600 + 600
    both = installer_job(STAGED, ['driver', 'firmware'], TIMEOUTS, 2, lock_timeout=0)
    assert both['async_seconds'] == (1800 * 6 + 600) + (3600 * 6 + 600)
    assert both['poll_interval'] == 2
    assert both['retries'] * both['poll_interval'] >= both['async_seconds']


def test_nothing_to_install_is_an_empty_job():
    assert installer_job(STAGED, [], TIMEOUTS, 10)['installers'] == []


@pytest.mark.parametrize('components, timeouts, poll, lock, message', [
    (['toolkit'], TIMEOUTS, 10, 600, 'no staged package for toolkit'),
    (['driver'], {}, 10, 600, 'no installer timeout for driver'),
    (['driver'], {'driver': 0}, 10, 600, 'positive'),
    (['driver'], TIMEOUTS, 0, 600, 'poll interval'),
    (['driver'], TIMEOUTS, 'soon', 600, 'whole number'),
    (['driver'], TIMEOUTS, 10, -1, 'lock timeout'),
])
def test_a_job_that_cannot_be_made_says_why(components, timeouts, poll, lock, message):
    with pytest.raises(ValueError, match=message):
        installer_job(STAGED, components, timeouts, poll, lock)
