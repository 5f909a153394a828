"""kernel_modules: the NPU modules per kernel, the next kernel, DKMS builds and `dkms status`."""
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.packages import driver_kernel_modules as km

RUNNING = '6.1.0-28-amd64'
NEXT = '6.1.0-29-amd64'
DKMS_PATH = '/var/lib/dkms/ascend_driver/25.0.rc1.1/%s/x86_64/module/drv_pcie_hdc_host.ko'


def test_release_order_is_numeric():
    assert km.newest_release(['5.15.0-91-generic', '5.15.0-101-generic', '5.4.0-200-generic']) == '5.15.0-101-generic'
    assert km.newest_release([RUNNING, NEXT]) == NEXT
    assert km.newest_release(['5.10.0-60.18.0.50.oe2203.x86_64', '5.10.0-182.0.0.95.oe2203.x86_64']) \
        == '5.10.0-182.0.0.95.oe2203.x86_64'
    assert km.newest_release([]) is None


def test_boot_releases_from_vmlinuz_only():
    names = ['vmlinuz-%s' % NEXT, 'vmlinuz-%s' % RUNNING, 'config-%s' % NEXT, 'initrd.img-%s' % NEXT,
             'vmlinuz', 'vmlinuz.old', 'vmlinuz-%s.old' % RUNNING, 'grub']
    assert km.boot_releases(names) == [RUNNING, NEXT]


def test_module_names():
    assert km.is_npu_module('drv_pcie_hdc_host.ko')
    assert km.is_npu_module('drv_seclib_host.ko.xz')
    assert not km.is_npu_module('drv_pcie_hdc_host.ko.bak')
    assert not km.is_npu_module('nvidia.ko')


def test_dkms_status_formats():
    text = ('ascend_driver/25.0.rc1.1, 6.1.0-28-amd64, x86_64: installed\n'
            'nvidia, 535.1, 5.15.0-91-generic, x86_64: installed (original_module exists)\n'
            'other/1.0: added\n'
            'Error! Could not locate dkms.conf file.\n')
    entries = km.parse_dkms_status(text)
    assert entries[0] == {'module': 'ascend_driver', 'version': '25.0.rc1.1', 'kernel': RUNNING, 'arch': 'x86_64',
                          'state': 'installed'}
    assert entries[1]['module'] == 'nvidia' and entries[1]['state'] == 'installed (original_module exists)'
    assert entries[2] == {'module': 'other', 'version': '1.0', 'kernel': None, 'arch': None, 'state': 'added'}
    assert len(entries) == 3


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_dkms_status_never_raises(text):
    for entry in km.parse_dkms_status(text):
        assert set(entry) == {'module', 'version', 'kernel', 'arch', 'state'}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=8))
def test_newest_is_one_of_them(releases):
    newest = km.newest_release(releases)
    assert newest is None if not any(releases) else newest in releases


def test_prebuilt_install_then_kernel_upgrade():
    fact = km.judge(RUNNING, ['vmlinuz-%s' % RUNNING, 'vmlinuz-%s' % NEXT],
                    {RUNNING: '/lib/modules/%s/updates/drv_pcie_hdc_host.ko' % RUNNING, NEXT: None}, [], 'x86_64')
    assert fact['running'] == {'release': RUNNING, 'present': True, 'dkms': False,
                               'path': '/lib/modules/%s/updates/drv_pcie_hdc_host.ko' % RUNNING}
    assert fact['next']['release'] == NEXT and not fact['next']['present']
    assert not fact['dkms']['used'] and fact['dkms']['status'] is None and fact['dkms']['entries'] == []


def test_dkms_build_for_both_kernels():
    fact = km.judge(RUNNING, ['vmlinuz-%s' % NEXT], {RUNNING: 'a', NEXT: 'b'},
                    [DKMS_PATH % RUNNING, DKMS_PATH % NEXT, '/var/lib/dkms/other/1/%s/x86_64/module/x.ko' % NEXT],
                    'x86_64', 'ascend_driver/25.0.rc1.1, %s, x86_64: installed\n' % RUNNING)
    assert fact['dkms']['used'] and fact['dkms']['module'] == 'ascend_driver'
    assert fact['dkms']['kernels'] == [RUNNING, NEXT]
    assert fact['next']['dkms'] and fact['next']['present']
    assert fact['dkms']['entries'][0]['state'] == 'installed'


def test_no_newer_kernel_next_is_running():
    fact = km.judge(RUNNING, [], {RUNNING: None}, [])
    assert fact['next']['release'] == RUNNING and not fact['running']['present']


def test_dkms_builds_of_another_arch_ignored():
    assert km.dkms_builds([DKMS_PATH % RUNNING], 'aarch64') == []
    assert km.dkms_builds(['/var/lib/dkms/x/1/k/x86_64/log/make.log', 'relative/path'], None) == []
