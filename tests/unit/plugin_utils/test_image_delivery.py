# -*- coding: utf-8 -*-
"""The images role's decisions: which images a node lacks, whether their archives may be loaded, and
whether an import gave the node the name its DaemonSet asks for."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.images import (
    FilterModule, images_import_problems, images_judgement, images_plan)
from ansible_collections.npu.ascend.plugins.plugin_utils.image_delivery import (
    ImageReferenceError, listed_references, normalize_reference)

PLUGIN = 'ascend-k8sdeviceplugin:v7.3.0'
EXPORTER = 'npu-exporter:v7.3.0'
PLUGIN_FILE = 'ascend-k8sdeviceplugin_v7.3.0_linux-x86_64.tar'
EXPORTER_FILE = 'npu-exporter_v7.3.0_linux-x86_64.tar'
SUM = 'ab' * 32
OTHER = 'cd' * 32
# What `ctr -n k8s.io images ls -q` prints on a node where CRI pulled pause and the plugin was imported.
CTR_LISTING = ('docker.io/library/ascend-k8sdeviceplugin:v7.3.0\n'
               'localhost/npu-ascend-pause:3.10\n'
               'sha256:%s\n' % ('ef' * 32))
# What `docker image ls --format '{{.Repository}}:{{.Tag}}'` prints: familiar names, <none> for untagged.
DOCKER_LISTING = 'ascend-k8sdeviceplugin:v7.3.0\n<none>:<none>\nswr.cn-south-1.myhuaweicloud.com/ascendhub/npu-exporter:v7.3.0\n'


@pytest.mark.parametrize('given, full', [
    (PLUGIN, 'docker.io/library/ascend-k8sdeviceplugin:v7.3.0'),
    ('ascendhub/ascend-k8sdeviceplugin:v7.3.0', 'docker.io/ascendhub/ascend-k8sdeviceplugin:v7.3.0'),
    ('index.docker.io/library/busybox', 'docker.io/library/busybox:latest'),
    ('swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin:v7.3.0',
     'swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin:v7.3.0'),
    ('localhost/npu-ascend-probe:1', 'localhost/npu-ascend-probe:1'),
    ('registry.lan:5000/mindx/npu-exporter:v7.3.0', 'registry.lan:5000/mindx/npu-exporter:v7.3.0'),
])
def test_a_name_is_compared_as_the_kubelet_asks_for_it(given, full):
    assert normalize_reference(given) == full


@pytest.mark.parametrize('bad', ['', 'Ascend-K8sDevicePlugin:v1', 'a b:c', 'x:', '/x:1', 'x:1;rm'])
def test_what_is_no_image_reference_is_refused(bad):
    with pytest.raises(ImageReferenceError):
        normalize_reference(bad)


def test_a_listing_of_either_engine_reads_the_same():
    assert listed_references(CTR_LISTING) == {'docker.io/library/ascend-k8sdeviceplugin:v7.3.0',
                                              'localhost/npu-ascend-pause:3.10'}
    assert listed_references(DOCKER_LISTING) == {'docker.io/library/ascend-k8sdeviceplugin:v7.3.0',
                                                 'swr.cn-south-1.myhuaweicloud.com/ascendhub/npu-exporter:v7.3.0'}


def test_only_the_missing_image_needs_its_archive():
    plan = images_plan([PLUGIN, {'image': EXPORTER}], CTR_LISTING, 'x86_64')
    assert [(e['image'], e['present'], e['file_name'], e['problem']) for e in plan] == [
        (PLUGIN, True, PLUGIN_FILE, ''), (EXPORTER, False, EXPORTER_FILE, '')]


def test_an_image_under_the_registry_name_is_not_the_one_the_daemonset_asks_for():
    plan = images_plan([EXPORTER], DOCKER_LISTING, 'aarch64')
    assert not plan[0]['present']
    assert plan[0]['file_name'] == 'npu-exporter_v7.3.0_linux-aarch64.tar'


def test_the_same_image_twice_is_one_entry_and_a_given_file_name_wins():
    plan = images_plan([{'image': EXPORTER, 'file_name': 'exporter.tar'}, 'docker.io/library/npu-exporter:v7.3.0'],
                       '', 'x86_64')
    assert [(e['image'], e['file_name']) for e in plan] == [(EXPORTER, 'exporter.tar')]


@pytest.mark.parametrize('item, words', [
    ('ascend-k8sdeviceplugin@sha256:' + 'a' * 64, 'names a digest'),
    ('Bad Name', 'is not an image reference'),
    ({'image': EXPORTER, 'file_name': '../etc/passwd'}, 'directory separator'),
    ({'image': EXPORTER, 'file_name': '-rf.tar'}, 'starts with "-"'),
])
def test_unusable_entries_carry_their_problem(item, words):
    (entry,) = images_plan([item], '', 'x86_64')
    assert words in entry['problem']
    (judged,) = images_judgement([entry], {}, '/srv', {})
    assert judged['problem'] and judged['fix']


def test_images_plan_refuses_a_string_for_the_list():
    with pytest.raises(AnsibleFilterError):
        images_plan(PLUGIN, '', 'x86_64')


def judge(listing='', sums=None, files=None, allow=False, source_dir='/srv/ascend'):
    plan = images_plan([PLUGIN], listing, 'x86_64')
    return images_judgement(plan, sums if sums is not None else {PLUGIN_FILE: SUM}, source_dir,
                            files if files is not None else {PLUGIN_FILE: {'exists': True, 'checksum': SUM}}, allow)[0]


def test_an_archive_whose_sha256_matches_is_loaded():
    judged = judge()
    assert (judged['problem'], judged['warning']) == ('', '')


def test_a_present_image_needs_no_archive_at_all():
    judged = judge(listing=CTR_LISTING, sums={}, files={})
    assert (judged['present'], judged['problem']) == (True, '')


def test_an_archive_without_a_known_sha256_is_refused_unless_the_operator_opts_out():
    refused = judge(sums={})
    assert 'no sha256' in refused['problem'] and 'images_allow_unverified=true' in refused['fix']
    allowed = judge(sums={}, allow=True)
    assert allowed['problem'] == '' and 'without a known sha256' in allowed['warning']


def test_an_archive_that_is_not_the_checked_file_is_refused_even_with_the_opt_out():
    judged = judge(sums={PLUGIN_FILE: OTHER}, allow=True)
    assert 'not the file that was checked' in judged['problem']


def test_a_missing_archive_is_named_with_the_command_that_makes_it():
    judged = judge(files={PLUGIN_FILE: {'exists': False, 'checksum': None, 'error': None}})
    assert '/srv/ascend/%s is missing' % PLUGIN_FILE in judged['problem']
    assert 'docker save %s -o %s' % (PLUGIN, PLUGIN_FILE) in judged['fix']


def test_no_package_source_is_a_problem_only_for_a_missing_image():
    assert 'no package source' in judge(source_dir='')['problem']
    assert judge(listing=CTR_LISTING, source_dir='')['problem'] == ''


def test_a_malformed_pin_is_refused():
    assert 'not 64 hex digits' in judge(sums={PLUGIN_FILE: 'abc'})['problem']


def test_an_import_that_gave_the_node_its_image_has_no_problem():
    plan = images_plan([PLUGIN], '', 'x86_64')
    assert images_import_problems(plan, '', CTR_LISTING) == []


def test_an_archive_saved_under_the_registry_name_is_named_with_the_tag_that_fixes_it():
    plan = images_plan([PLUGIN], '', 'x86_64')
    after = 'swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin:v7.3.0\n'
    (problem,) = images_import_problems(plan, '', after, 'containerd')
    assert 'the import added: swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin:v7.3.0' in problem
    assert 'ctr -n k8s.io images tag <name> docker.io/library/ascend-k8sdeviceplugin:v7.3.0' in problem
    (docker,) = images_import_problems(plan, '', '', 'docker')
    assert 'no image new to the node' in docker and 'docker tag <name> %s' % PLUGIN in docker


def test_the_filters_are_registered():
    assert set(FilterModule().filters()) == {'images_plan', 'images_judgement', 'images_import_problems', 'images_bundle',
                                             'images_registry_reference'}


def test_the_registry_reference_filter():
    reference = FilterModule().filters()['images_registry_reference']
    assert reference(PLUGIN, 'r.example:5000/ascend') == 'r.example:5000/ascend/' + PLUGIN
    assert reference(PLUGIN, 'https://r.example/') == 'r.example/' + PLUGIN
    assert reference(PLUGIN, '') == PLUGIN
    with pytest.raises(AnsibleFilterError, match='names no registry host'):
        reference(PLUGIN, 'site/ascend')


def test_an_unknown_architecture_matters_only_when_the_archive_is_needed():
    (missing,) = images_plan([PLUGIN], '', '')
    assert 'architecture is unknown' in missing['problem']
    (present,) = images_plan([PLUGIN], CTR_LISTING, '')
    assert present['problem'] == ''


ZIP = 'Ascend-mindxdl-device-plugin_7.3.0_linux-x86_64.zip'
BASE = 'ubuntu_22.04_linux-x86_64.tar'


def test_an_image_from_a_component_package_is_checked_by_its_zip_and_its_base():
    entry = images_plan([{'image': PLUGIN, 'package': ZIP}], '', 'x86_64', BASE)[0]
    assert entry['sources'] == [ZIP, BASE] and entry['file_name'] == PLUGIN_FILE and entry['arch'] == 'x86_64'
    files = {ZIP: {'exists': True, 'checksum': SUM}, BASE: {'exists': True, 'checksum': OTHER}}
    judged = images_judgement([entry], {ZIP: SUM, BASE: OTHER}, '/srv/ascend', files)[0]
    assert judged['problem'] == ''
    # The base's sha256 is checked as the zip's is: a wrong one stops the node, naming the base.
    judged = images_judgement([entry], {ZIP: SUM, BASE: SUM}, '/srv/ascend', files)[0]
    assert 'the base image archive /srv/ascend/%s has sha256 %s' % (BASE, OTHER) in judged['problem']
    judged = images_judgement([entry], {BASE: OTHER}, '/srv/ascend', files)[0]
    assert judged['problem'].startswith('the component package /srv/ascend/%s of %s has no sha256' % (ZIP, PLUGIN))
    missing = images_judgement([entry], {ZIP: SUM, BASE: OTHER}, '/srv/ascend', {ZIP: files[ZIP]})[0]
    assert 'the base image archive /srv/ascend/%s is missing' % BASE in missing['problem']
    assert 'docker save ubuntu:22.04' in missing['fix']


def test_a_package_without_a_base_archive_is_refused_and_an_entry_base_wins():
    entry = images_plan([{'image': PLUGIN, 'package': ZIP}], '', 'x86_64')[0]
    assert 'no base image archive is named' in entry['problem']
    entry = images_plan([{'image': PLUGIN, 'package': ZIP, 'base': 'other.tar'}], '', 'x86_64', BASE)[0]
    assert entry['sources'] == [ZIP, 'other.tar']
    # A present image needs neither.
    assert images_plan([{'image': PLUGIN, 'package': ZIP}], CTR_LISTING, 'x86_64')[0]['problem'] == ''


def test_a_package_name_that_leaves_the_source_is_refused():
    entry = images_plan([{'image': PLUGIN, 'package': '../' + ZIP}], '', 'x86_64', BASE)[0]
    assert 'directory separator' in entry['problem']


def test_the_bundle_names_each_file_once_and_every_bad_one():
    from ansible_collections.npu.ascend.plugins.filter.images import images_bundle
    wanted = [{'image': PLUGIN, 'package': ZIP}, {'image': EXPORTER, 'package': 'exporter.zip'}, 'localhost/validate:1']
    plans = {'n%d' % i: images_plan(wanted, '', 'x86_64', BASE) for i in range(7)}
    plans['gone'] = None
    files = {ZIP: {'exists': True, 'checksum': SUM}, BASE: {'exists': True, 'checksum': OTHER},
             'validate_1_linux-x86_64.tar': {'exists': True, 'checksum': SUM}}
    rows = images_bundle(plans, {ZIP: SUM, BASE: SUM, 'validate_1_linux-x86_64.tar': SUM}, '/srv', files)
    by_name = {row['file_name']: row for row in rows}
    assert sorted(by_name) == sorted([ZIP, BASE, 'exporter.zip', 'validate_1_linux-x86_64.tar'])
    # Problems first: the base (wrong sha256, shared by both images) and the missing exporter zip.
    assert [row['file_name'] for row in rows[:2]] == ['exporter.zip', BASE]
    assert by_name[BASE]['images'] == [PLUGIN, EXPORTER]
    assert by_name[BASE]['line'].startswith('FAIL %s (image %s, %s, for n0, n1, n2, n3, n4 and 2 more)' % (BASE, PLUGIN, EXPORTER))
    assert 'is missing' in by_name['exporter.zip']['problem']
    assert by_name[ZIP]['line'].startswith('OK   %s (image %s, sha256 %s' % (ZIP, PLUGIN, SUM[:16]))
    assert all(row['source_file'] for row in rows)
    with pytest.raises(AnsibleFilterError, match='host_values'):
        images_bundle([])


def test_an_image_no_file_can_make_is_not_a_file_to_download():
    from ansible_collections.npu.ascend.plugins.filter.images import images_bundle
    plans = {'n1': [{'image': 'bad image', 'present': False, 'problem': 'is not an image reference'}]}
    rows = images_bundle(plans, {}, '/srv', {})
    assert [(row['file_name'], row['source_file']) for row in rows] == [('bad image', False)]
