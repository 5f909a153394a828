# -*- coding: utf-8 -*-
"""node_lock: one flock per node, naming its holder to a run that gave up waiting."""

import json
import os

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.files import node_lock


def test_holder_is_written_and_cleared(tmp_path):
    path = str(tmp_path / 'state' / 'lock')
    with node_lock.NodeLock(path=path, holder={'module': 'npu.ascend.docker_runtime', 'target': '/etc/docker/daemon.json'}):
        holder = json.loads(open(path).read())
        assert holder['pid'] == os.getpid() and holder['module'] == 'npu.ascend.docker_runtime'
        assert holder['target'] == '/etc/docker/daemon.json' and holder['started_at'].endswith('Z')
    assert open(path).read() == ''
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o600)


def test_a_second_holder_waits_until_the_timeout_and_names_the_first(tmp_path, held_by_another_process):
    path = str(tmp_path / 'lock')
    now = [1000.0]
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    with held_by_another_process(path, {'module': 'npu.ascend.ascend_runfile', 'target': 'driver', 'user': 'ops'}) as pid:
        waiter = node_lock.NodeLock(path=path, timeout=3, clock=lambda: now[0], sleep=sleep)
        with pytest.raises(node_lock.NodeLockTimeout) as caught:
            waiter.acquire()
    message = str(caught.value)
    assert 'pid %d' % pid in message and 'npu.ascend.ascend_runfile' in message and 'on driver' in message
    assert 'user ops' in message and 'within 3 seconds' in message and 'Fix:' in message and path in message
    assert 2.9 <= sum(slept) <= 3.2
    # Released: the next one gets it at once.
    with node_lock.NodeLock(path=path, timeout=0):
        pass


def test_timeout_zero_does_not_wait_and_negative_is_refused(tmp_path, held_by_another_process):
    path = str(tmp_path / 'lock')
    with held_by_another_process(path, {}):
        with pytest.raises(node_lock.NodeLockTimeout):
            node_lock.NodeLock(path=path, timeout=0, sleep=lambda _s: pytest.fail('slept')).acquire()
    with pytest.raises(ValueError):
        node_lock.NodeLock(path=path, timeout=-1).acquire()


def test_lock_dies_with_its_holder(tmp_path):
    path = str(tmp_path / 'lock')
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        node_lock.NodeLock(path=path, holder={'module': 'crashing'}).acquire()
        os.write(write_end, b'x')
        os.kill(os.getpid(), 9)
    os.read(read_end, 1)
    os.waitpid(pid, 0)
    with node_lock.NodeLock(path=path, timeout=0):
        pass


def test_unwritable_place_is_a_clear_error(tmp_path):
    blocker = tmp_path / 'file'
    blocker.write_text('')
    with pytest.raises(node_lock.NodeLockError) as caught:
        node_lock.NodeLock(path=str(blocker / 'lock')).acquire()
    assert 'Fix:' in str(caught.value)


@pytest.mark.parametrize('holder, text', [
    ({}, 'not said who it is'),
    ('garbage', 'not said who it is'),
    ({'pid': 7}, 'pid 7'),
])
def test_describe_holder(holder, text):
    assert text in node_lock._describe_holder(holder)


def test_the_same_process_does_not_wait_for_itself(tmp_path):
    path = str(tmp_path / 'lock')
    outer = node_lock.NodeLock(path=path, holder={'module': 'outer'}).acquire()
    with node_lock.NodeLock(path=path, timeout=0):
        pass
    # Still held by the outer one: another process cannot take it.
    pid = os.fork()
    if pid == 0:
        try:
            node_lock.NodeLock(path=path, timeout=0).acquire()
            os._exit(1)
        except node_lock.NodeLockTimeout:
            os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    outer.release()
    with node_lock.NodeLock(path=path, timeout=0):
        pass
