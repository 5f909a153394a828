# -*- coding: utf-8 -*-
"""What the hccn role decides about a node before the fleet plan, and the node's share of that plan
(plugin_utils/hccn_state.py and the filters that expose it)."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.hccn import hccn_node_plan as node_plan_filter
from ansible_collections.npu.ascend.plugins.filter.hccn import hccn_state as state_filter
from ansible_collections.npu.ascend.plugins.plugin_utils.hccn_state import hccn_node_plan, hccn_state

PATH = '/usr/local/Ascend'
A2_CHIPS = [{'npu_id': npu, 'chip_id': 0, 'name': '910B3'} for npu in range(8)]
A3_CHIPS = [{'npu_id': npu, 'chip_id': die, 'phy_id': 2 * npu + die, 'name': 'Ascend910'}
            for npu in range(8) for die in range(2)]
INFERENCE_CHIPS = [{'npu_id': npu, 'chip_id': 0, 'name': '310P3'} for npu in range(2)]
PLAN = {'host': 't1', 'enabled': 'auto', 'base_address': '10.0.0.10', 'addresses': [], 'install_path': PATH}


def probe(chips=None, error=None, install_path=PATH):
    result = {'install_path': install_path, 'npu_smi': {'chips': chips} if chips is not None else None}
    if error:
        result['npu_smi_error'] = error
    return result


def options(**changes):
    result = dict(PLAN)
    result.update(changes)
    return result


def test_a_training_node_with_an_address_plan_takes_part_from_the_probe_alone():
    state = hccn_state(probe(A2_CHIPS), None, options())
    assert state['probe_current'] is True and state['refusal'] == '' and state['note'] == ''
    assert state['take_part'] is True and state['npu_ids'] == list(range(8)) and state['model']['roce'] is True
    assert state['super_pod_chip'] == {'npu_id': 0, 'chip_id': 0}


def test_an_a3_node_configures_each_die_by_its_phy_id():
    state = hccn_state(probe(A3_CHIPS), None, options())
    assert state['take_part'] and state['npu_ids'] == list(range(16)) and state['model']['per_die'] is True


@pytest.mark.parametrize('enabled,settings,note', [
    (False, {}, 't1: NPU RoCE network not configured: hccn_enabled is false.'),
    ('FALSE', {}, 't1: NPU RoCE network not configured: hccn_enabled is false.'),
    ('auto', {'base_address': '', 'addresses': []},
     't1: NPU RoCE network not configured: no address plan (set hccn_base_address or hccn_addresses to configure it).'),
])
def test_a_node_left_alone_says_why(enabled, settings, note):
    state = hccn_state(probe(A2_CHIPS), None, options(enabled=enabled, **settings))
    assert state['take_part'] is False and state['note'] == note


def test_true_takes_part_without_a_plan_so_that_the_fleet_plan_names_the_missing_plan():
    state = hccn_state(probe(A2_CHIPS), None, options(enabled=True, base_address='', addresses=[]))
    assert state['mode'] == 'true' and state['take_part'] is True


def test_inference_chips_have_no_roce_port_of_their_own():
    state = hccn_state(probe(INFERENCE_CHIPS), None, options(enabled='true'))
    assert state['take_part'] is False and 'no RoCE ports of their own' in state['note']


def test_an_enabled_value_that_is_not_a_mode_is_refused_with_the_fix():
    state = hccn_state(probe(A2_CHIPS), None, options(enabled='maybe'))
    assert state['refusal'] == ('t1: hccn_enabled is maybe; fix: set it to auto (training nodes with an address plan), '
                                'true (every training node needs a plan) or false (leave the NPU network alone).')


def test_the_node_stops_on_a_bad_mode_first_then_on_chips_it_cannot_read_outside_a_dry_run():
    assert hccn_state(probe(A2_CHIPS), None, options())['stop'] == ''
    bad_mode = hccn_state(probe(None), None, options(enabled='maybe'))
    assert bad_mode['stop'] == bad_mode['refusal'] and bad_mode['stop'].startswith('t1: hccn_enabled is maybe;')
    unreadable = hccn_state(probe(None, error='npu-smi: dcmi module initialize failed'), None, options())
    assert unreadable['stop'] == 't1: the hccn role cannot read the NPU chips: npu-smi: dcmi module initialize failed'
    # A dry run on a node whose driver would be installed first goes on, and takes no part.
    dry = hccn_state(probe(None), None, options(check_mode=True))
    assert dry['stop'] == '' and dry['take_part'] is False


def test_a_stale_probe_means_the_roles_own_read_is_the_one_used():
    stale = probe(INFERENCE_CHIPS, install_path='/opt/elsewhere')
    before = hccn_state(stale, None, options())
    assert before['probe_current'] is False and before['chips'] is None
    assert before['chip_error'] == 'npu-smi could not be read'
    after = hccn_state(stale, {'npu_smi': {'chips': A2_CHIPS}}, options())
    assert after['chips'] == A2_CHIPS and after['take_part'] is True


def test_chips_that_cannot_be_read_say_why_and_take_no_part():
    failed = hccn_state(probe(None), {'failed': True, 'msg': 'npu-smi timed out after 30 s'},
                        options(install_path='/opt/other'))
    assert failed['chips'] is None and failed['chip_error'] == 'npu-smi timed out after 30 s'
    assert failed['take_part'] is False and 'cannot be read in this dry run (npu-smi timed out' in failed['note']
    assert failed['super_pod_chip'] is None
    # The probe read the path but no npu-smi: the driver is not installed yet.
    missing = hccn_state({'install_path': PATH, 'npu_smi': None}, None, options())
    assert missing['chips'] is None and missing['chip_error'].startswith('npu-smi is not installed. Fix:')
    broken = hccn_state(probe(None, error='npu-smi: dcmi module initialize failed'), None, options())
    assert broken['chip_error'] == 'npu-smi: dcmi module initialize failed'


FLEET = {
    'plans': {'t1': [{'npu': 0, 'address': '10.0.0.10', 'netmask': '255.255.255.0', 'gateway': None,
                      'detect_address': None}]},
    'problems': [{'host': 't1', 'npu': 0, 'peer_host': None, 'message': 'own'},
                 {'host': 't2', 'npu': 1, 'peer_host': 't1', 'message': 'holds t2s address'},
                 {'host': 't3', 'npu': 2, 'peer_host': None, 'message': 'not mine'}],
    'pings': {'t1': [{'npu': 0, 'address': '10.0.1.10', 'peer': 't2:0', 'peer_host': 't2'},
                     {'npu': 0, 'address': '10.0.1.11', 'peer': 'gone:0', 'peer_host': 'gone'}]},
    'hccs_pings': {'t1': [{'npu': 0, 'address': '10.1.0.1', 'peer': 't2:0', 'peer_host': 't2'}]},
    'super_pods': {'t1': {'id': 0}},
}


def test_a_nodes_share_of_the_fleet_plan():
    share = hccn_node_plan(FLEET, 't1', ['t1', 't2'])
    assert [problem['message'] for problem in share['problems']] == ['own', 'holds t2s address']
    assert share['npus'] == [{'npu': 0, 'address': '10.0.0.10', 'netmask': '255.255.255.0'}]
    assert share['gate_reads'] == ['link', 'net_health', 'netdetect', 'vnic']
    # The peer left the run (failed, unreachable, --limit): it is not pinged.
    assert share['pings'] == [{'npu': 0, 'address': '10.0.1.10', 'peer': 't2:0'}]
    assert share['hccs_pings'] == [{'npu': 0, 'address': '10.1.0.1', 'peer': 't2:0'}]


def test_a_node_outside_the_plan_has_nothing_to_do():
    share = hccn_node_plan(FLEET, 't9', ['t1', 't9'])
    assert share == {'problems': [], 'npus': [], 'gate_reads': ['link', 'net_health', 'netdetect'], 'pings': [],
                     'hccs_pings': []}


def test_the_filters_name_themselves_in_their_errors():
    with pytest.raises(AnsibleFilterError, match='^hccn_state: the probe'):
        state_filter('not a probe', None, options())
    with pytest.raises(AnsibleFilterError, match="^hccn_state: npu-smi's chips"):
        state_filter(probe('910B3'), None, options())
    with pytest.raises(AnsibleFilterError, match='^hccn_node_plan expects'):
        node_plan_filter([], 't1', ['t1'])
