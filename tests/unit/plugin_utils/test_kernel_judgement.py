"""Kernels that move on: preflight's check, the plan's line, the doctor, the fleet report, the filter."""
import pytest

from ansible_collections.npu.ascend.plugins.filter.ascend_kernel_problem import ascend_kernel_problem
from ansible_collections.npu.ascend.plugins.plugin_utils import doctor, fleet_report, kernel_judgement as kj, planner

RUNNING, NEXT = '6.1.0-28-amd64', '6.1.0-29-amd64'
DRIVER = {'version': '25.0.rc1.1'}
FIRMWARE = {'version': '7.7.0.1.231'}


def modules(running=True, upcoming=NEXT, next_present=False, dkms_kernels=()):
    def state(release, present):
        return {'release': release, 'present': present, 'path': '/lib/modules/%s/updates/drv_pcie_hdc_host.ko'
                % release if present else None, 'dkms': release in dkms_kernels}
    return {'running': state(RUNNING, running), 'next': state(upcoming, next_present if upcoming != RUNNING else running),
            'installed': [upcoming],
            'dkms': {'used': bool(dkms_kernels), 'module': 'ascend_driver' if dkms_kernels else None,
                     'version': '25.0.rc1.1' if dkms_kernels else None, 'kernels': list(dkms_kernels),
                     'status': None, 'entries': []}}


# probe()'s driver when none is given (None stands for no driver installed).
_INSTALLED_DRIVER = object()


def probe(kernel_modules, driver=_INSTALLED_DRIVER, **extra):
    result = {'installed': {'driver': DRIVER if driver is _INSTALLED_DRIVER else driver, 'firmware': FIRMWARE}, 'kernel_modules': kernel_modules,
              'install_path': '/usr/local/Ascend', 'npu_count': 8, 'npu_smi_path': '/usr/local/sbin/npu-smi',
              'chip_family': '910b'}
    result.update(extra)
    return result


def test_no_problem_without_driver_or_probe():
    assert kj.kernel_problem(probe(modules(), driver=None)) is None
    assert kj.kernel_problem({'installed': {'driver': DRIVER}}) is None
    assert kj.kernel_problem(probe(modules(upcoming=RUNNING))) is None
    assert kj.kernel_problem(probe(modules(next_present=True))) is None


def test_next_kernel_without_modules_after_a_prebuilt_install():
    problem = kj.kernel_problem(probe(modules()))
    assert problem['kind'] == 'next' and problem['release'] == NEXT
    assert 'kernel %s, which the next boot takes, has no NPU modules of driver 25.0.rc1.1' % NEXT in problem['detail']
    assert 'installed without DKMS: prebuilt modules for %s only' % RUNNING in problem['detail']
    assert problem['fix'].startswith('reinstall the driver so that it builds through DKMS: run '
                                     '/usr/local/Ascend/driver/script/uninstall.sh, reboot')
    assert 'hdk_hold_kernel: true' in problem['fix']


def test_next_kernel_without_modules_after_a_dkms_install():
    problem = kj.kernel_problem(probe(modules(dkms_kernels=(RUNNING,))))
    assert 'built through DKMS (module ascend_driver) for %s only' % RUNNING in problem['detail']
    assert 'linux-headers-%s' % NEXT in problem['fix'] and '`dkms autoinstall -k %s`' % NEXT in problem['fix']


def test_running_kernel_without_modules_is_the_kernel_changed_case():
    problem = kj.kernel_problem(probe(modules(running=False, upcoming=RUNNING)))
    assert problem['kind'] == 'running'
    assert problem['detail'].startswith('kernel changed, driver modules missing: driver 25.0.rc1.1 is installed but '
                                        'the running kernel %s has no NPU modules' % RUNNING)


def test_preflight_check_and_plan_line():
    wanted = {'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231'}
    node = probe(modules())
    plan = planner.plan_node(wanted, node)
    check = kj.preflight_check(node, plan)
    assert check['name'] == 'NPU kernel modules' and not check['ok'] and check['fix']
    # No reboot planned: no line. A pending reboot boots the kernel without modules: the plan says so.
    assert not any('no NPU modules' in line for line in plan['lines'])
    pending = planner.plan_node(wanted, dict(node, reboot_pending=True))
    assert 'the reboot boots kernel %s, which has no NPU modules (see the kernel modules check)' % NEXT \
        in pending['lines']
    # A driver the run installs goes through DKMS: the check passes and says so.
    fresh = probe(modules(), driver=None)
    fresh_plan = planner.plan_node(wanted, fresh)
    assert kj.preflight_check(fresh, fresh_plan)['ok']
    upgrade = planner.plan_node({'driver': '25.3.rc1', 'firmware': '7.7.0.1.231'}, dict(node, reboot_pending=True))
    assert kj.preflight_check(node, upgrade)['ok'] and not any('no NPU modules' in line for line in upgrade['lines'])
    assert kj.preflight_check({'installed': {}}, plan) == {'name': 'NPU kernel modules', 'ok': True,
                                                           'detail': 'not probed', 'fix': ''}
    good = probe(modules(dkms_kernels=(RUNNING, NEXT), next_present=True))
    assert kj.preflight_check(good, plan)['detail'] == ('driver 25.0.rc1.1 has its modules for %s and %s (the next '
                                                        'boot) (DKMS)' % (RUNNING, NEXT))


def _doctor(facts):
    return doctor.diagnose([{'node': 'n1', 'facts': facts, 'npu_smi': {'ok': True, 'chips': []},
                             'install_path': '/usr/local/Ascend'}])


def test_doctor_kernel_changed_driver_modules_missing():
    findings = _doctor(probe(modules(running=False, upcoming=RUNNING)))
    assert [(f['component'], f['problem']) for f in findings] == [('driver', 'kernel changed, driver modules missing')]
    assert 'uninstall.sh' in findings[0]['fix']


def test_doctor_next_kernel_without_modules():
    findings = _doctor(probe(modules(dkms_kernels=(RUNNING,))))
    assert ('driver', 'the kernel the next boot takes has no NPU driver modules') in \
        [(f['component'], f['problem']) for f in findings]


def test_fleet_report_shows_it():
    chips = {'chips': [{'npu_id': 0, 'chip_id': 0, 'health': 'OK', 'name': '910B4', 'bus_id': 'x'}]}
    entry = fleet_report.node_entry('n1', {'facts': probe(modules()), 'npu_smi': chips})
    check = entry['checks'][0]
    assert check['status'] == fleet_report.FAILED and 'all 1 chips OK now, but kernel %s' % NEXT in check['message']
    gone = fleet_report.node_entry('n1', {'facts': probe(modules(running=False, upcoming=RUNNING)),
                                          'npu_smi': None, 'npu_smi_error': 'dcmi module initialize failed. ret is -8005'})
    assert gone['checks'][0]['message'].startswith('kernel changed, driver modules missing')


def test_filter():
    assert ascend_kernel_problem(probe(modules()))['kind'] == 'next'
    assert ascend_kernel_problem(None) is None
    with pytest.raises(Exception, match='expects what npu.ascend.ascend_facts returned'):
        ascend_kernel_problem('text')


def test_the_operator_can_opt_out_of_the_kernel_modules_check():
    probe = {'installed': {'driver': {'version': '25.0.rc1.1'}},
             'kernel_modules': {'running': {'release': '6.1.0-9', 'present': False}, 'next': {}, 'dkms': {}}}
    assert kj.preflight_check(probe, {})["ok"] is False
    skipped = kj.preflight_check(probe, {}, enabled=False)
    assert skipped['ok'] is True and skipped['detail'] == 'not checked (preflight_kernel_modules_check is false)'
