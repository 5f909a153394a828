# -*- coding: utf-8 -*-
import pytest

from ansible_collections.npu.ascend.plugins.module_utils.hardware.npu_smi import (
    NpuSmiError,
    chip_is_healthy,
    detect_error,
    parse_info,
    parse_info_list,
    parse_info_mapping,
    parse_key_value_records,
    parse_key_values,
)

CHIP_KEYS = {
    'npu_id', 'chip_id', 'phy_id', 'name', 'health', 'healthy', 'power_w', 'temp_c', 'bus_id', 'aicore_pct',
    'memory_used_mb', 'memory_total_mb', 'hbm_used_mb', 'hbm_total_mb', 'hugepages_used', 'hugepages_total',
}


def test_910b4_table(sample):
    info = parse_info(sample('npu-smi/910B4_25.0.rc1.1_info.txt'))
    assert info['tool_version'] == '25.0.rc1.1'
    assert info['driver_version'] == '25.0.rc1.1'
    assert [chip['npu_id'] for chip in info['chips']] == list(range(8))
    assert all(set(chip) == CHIP_KEYS for chip in info['chips'])
    assert info['chips'][0] == {
        'npu_id': 0, 'chip_id': 0, 'phy_id': None, 'name': '910B4', 'health': 'OK', 'healthy': True, 'power_w': 87.2,
        'temp_c': 33, 'bus_id': '0000:C1:00.0', 'aicore_pct': 0, 'memory_used_mb': 0, 'memory_total_mb': 0,
        'hbm_used_mb': 2654, 'hbm_total_mb': 32768, 'hugepages_used': 0, 'hugepages_total': 0,
    }
    assert info['chips'][7]['hbm_used_mb'] == 2653
    assert info['chips'][7]['bus_id'] == '0000:42:00.0'
    assert info['processes'] == []


def test_910b2_table(sample):
    info = parse_info(sample('npu-smi/910B2_23.0.7_info.txt'))
    assert (info['tool_version'], info['driver_version']) == ('23.0.7', '23.0.7')
    assert len(info['chips']) == 8
    assert {chip['name'] for chip in info['chips']} == {'910B2'}
    assert info['chips'][0]['hbm_used_mb'] == 29954
    assert info['chips'][0]['hbm_total_mb'] == 65536
    assert info['chips'][0]['power_w'] == 96.5
    assert info['chips'][7]['power_w'] == 93.8


def test_910b3_processes_with_empty_names_and_tight_slash(sample):
    info = parse_info(sample('npu-smi/910B3_24.1.rc2_info-with-processes.txt'))
    assert info['driver_version'] == '24.1.rc2'
    # "54592/ 65536": no blank before the slash.
    assert (info['chips'][0]['hbm_used_mb'], info['chips'][0]['hbm_total_mb']) == (54592, 65536)
    assert len(info['processes']) == 8
    assert info['processes'][0] == {'npu_id': 0, 'chip_id': 0, 'pid': 277624, 'name': '', 'memory_mb': 51270}
    assert info['processes'][4]['pid'] == 1007953
    assert [process['npu_id'] for process in info['processes']] == list(range(8))
    assert all('container_pid' not in process for process in info['processes'])


def test_910_masked_ddr_and_hbm_with_processes(sample):
    info = parse_info(sample('npu-smi/910-masked_23.0.rc3_info-with-processes.txt'))
    # The tool and the driver differ in this capture.
    assert (info['tool_version'], info['driver_version']) == ('23.0.rc3', '23.0.rc2.3')
    first = info['chips'][0]
    assert first['name'] == 'xxx'
    assert (first['memory_used_mb'], first['memory_total_mb']) == (4565, 15137)
    assert (first['hbm_used_mb'], first['hbm_total_mb']) == (30710, 32768)
    assert (first['hugepages_used'], first['hugepages_total']) == (1123, 1123)
    assert info['chips'][3]['memory_total_mb'] == 15039
    assert info['processes'][0] == {'npu_id': 0, 'chip_id': 0, 'pid': 139667, 'name': 'python', 'memory_mb': 30780}
    assert info['processes'][7]['pid'] == 139090


def test_legacy_910b_name_is_910_with_ddr(sample):
    info = parse_info(sample('npu-smi/910B-legacy910_24.1.0_info.txt'))
    assert info['driver_version'] == '24.1.0'
    assert {chip['name'] for chip in info['chips']} == {'910B'}
    assert info['chips'][0]['memory_total_mb'] == 15038
    assert info['chips'][0]['memory_used_mb'] == 2382
    assert info['chips'][0]['hbm_used_mb'] == 0
    assert info['chips'][0]['hbm_total_mb'] == 32768


def test_a3_two_chips_per_npu_and_dash_power(sample):
    info = parse_info(sample('npu-smi/Ascend910-A3_24.1.rc3.7_info.txt'))
    assert info['driver_version'] == '24.1.rc3.7'
    assert len(info['chips']) == 16
    assert [(chip['npu_id'], chip['chip_id'], chip['phy_id']) for chip in info['chips'][:4]] == [
        (0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3)]
    assert info['chips'][0]['power_w'] == 178.7
    assert info['chips'][1]['power_w'] is None
    assert info['chips'][1]['bus_id'] == '0000:9F:00.0'
    assert info['chips'][15] == {
        'npu_id': 7, 'chip_id': 1, 'phy_id': 15, 'name': 'Ascend910', 'health': 'OK', 'healthy': True, 'power_w': None,
        'temp_c': 38, 'bus_id': '0000:83:00.0', 'aicore_pct': 0, 'memory_used_mb': 0, 'memory_total_mb': 0,
        'hbm_used_mb': 3187, 'hbm_total_mb': 65536, 'hugepages_used': 0, 'hugepages_total': 0,
    }


def test_310p_large_npu_id_and_na_power(sample):
    info = parse_info(sample('npu-smi/310P3_25.5.2_info.txt'))
    assert info['driver_version'] == '25.5.2'
    assert info['chips'] == [{
        'npu_id': 32896, 'chip_id': 0, 'phy_id': 0, 'name': '310P3', 'health': 'OK', 'healthy': True, 'power_w': None,
        'temp_c': 54, 'bus_id': '0000:00:00.0', 'aicore_pct': 0, 'memory_used_mb': 1904, 'memory_total_mb': 44213,
        'hbm_used_mb': None, 'hbm_total_mb': None, 'hugepages_used': 0, 'hugepages_total': 0,
    }]
    assert info['processes'] == []


def test_310p_vm_npu_id_not_starting_at_zero(sample):
    info = parse_info(sample('npu-smi/310P3_22.0.4_info-vm.txt'))
    assert info['tool_version'] == '22.0.4'
    assert len(info['chips']) == 1
    chip = info['chips'][0]
    assert (chip['npu_id'], chip['chip_id'], chip['phy_id']) == (7, 0, 0)
    assert chip['bus_id'] == '0000:00:07.0'
    assert (chip['memory_used_mb'], chip['memory_total_mb']) == (1805, 21527)
    assert chip['temp_c'] == 28


def test_310b_bus_id_na(sample):
    info = parse_info(sample('npu-smi/310B4_23.0.rc3_info.txt'))
    chip = info['chips'][0]
    assert chip['bus_id'] is None
    assert chip['power_w'] == 7.2
    assert (chip['hugepages_used'], chip['hugepages_total']) == (15, 15)
    assert (chip['memory_used_mb'], chip['memory_total_mb']) == (1797, 3513)
    assert chip['hbm_total_mb'] is None


def test_synthetic_narrow_310_without_hugepages(synthetic):
    info = parse_info(synthetic('npu_smi_synthetic/310_21.0.3_info-narrow.txt'))
    assert info['tool_version'] == '21.0.3'
    assert len(info['chips']) == 4
    assert all(chip['hugepages_used'] is None and chip['hugepages_total'] is None for chip in info['chips'])
    assert [chip['phy_id'] for chip in info['chips']] == [0, 1, 2, 3]
    assert (info['chips'][2]['health'], info['chips'][2]['healthy']) == ('Warning', False)
    assert info['chips'][2]['aicore_pct'] == 3
    assert info['chips'][2]['temp_c'] == 51
    assert (info['chips'][0]['memory_used_mb'], info['chips'][0]['memory_total_mb']) == (2703, 8192)


def test_synthetic_wide_26x_with_container_pid(synthetic):
    info = parse_info(synthetic('npu_smi_synthetic/910B3_26.0.rc1_info-wide.txt'))
    assert info['driver_version'] == '26.0.rc1'
    assert [(chip['health'], chip['healthy']) for chip in info['chips']] == [('OK', True), ('Alarm', False)]
    assert info['chips'][0]['hbm_used_mb'] == 61023
    assert info['chips'][1]['aicore_pct'] == 100
    assert info['processes'] == [
        {'npu_id': 0, 'chip_id': 0, 'pid': 2284417, 'name': 'python3.11', 'memory_mb': 57344, 'container_pid': 412},
        {'npu_id': 0, 'chip_id': 0, 'pid': 2284420, 'name': '', 'memory_mb': 210, 'container_pid': None},
    ]


def test_synthetic_310p_duo_two_chips_per_npu(synthetic):
    info = parse_info(synthetic('npu_smi_synthetic/310P3-duo_24.1.rc2_info.txt'))
    assert [(chip['npu_id'], chip['chip_id'], chip['phy_id']) for chip in info['chips']] == [
        (8, 0, 0), (8, 1, 1), (9, 0, 2), (9, 1, 3)]
    assert info['chips'][2]['health'] == 'Critical'
    assert info['chips'][1]['memory_total_mb'] == 43693


def test_columns_come_from_headers_not_offsets(sample):
    """Re-indenting every cell must not change the result."""
    original = sample('npu-smi/910B4_25.0.rc1.1_info.txt')
    shifted = '\n'.join(
        line if not line.startswith('|') else '|' + '|'.join('   ' + cell.strip() + '   ' for cell in line[1:-1].split('|'))
        + '|' for line in original.splitlines())
    assert shifted != original
    assert parse_info(shifted) == parse_info(original)


@pytest.mark.parametrize('text, code', [
    ('dcmi module initialize failed. ret is -8005\n', -8005),
    ('Get card list failed, ret is -8020\n', -8020),
    ('Error code: -8007\nThe device does not exist.\n', -8007),
    ('query failed, error code is -9005\n', -9005),
])
def test_detect_error_with_code(text, code):
    error = detect_error(text)
    assert isinstance(error, NpuSmiError)
    assert error.code == code
    assert str(code) in str(error)


def test_detect_error_without_code():
    error = detect_error('dcmi module initialize failed.\n')
    assert error is not None and error.code is None
    assert 'dcmi module initialize failed' in error.message


@pytest.mark.parametrize('relative', [
    'npu-smi/910B4_25.0.rc1.1_info.txt',
    'npu-smi/910-D801_23.0.5_info-t-health-i0-c0.txt',
    'npu-smi/910B4_25.0.rc1.1_upgrade-t-mcu.txt',
    'npu-smi/910-D801_23.0.5_info-t-board-i0.txt',
])
def test_detect_error_ignores_normal_output(sample, relative):
    assert detect_error(sample(relative)) is None


@pytest.mark.parametrize('parser', [parse_info, parse_info_list, parse_info_mapping, parse_key_values])
def test_parsers_raise_npu_smi_error_on_failure_output(synthetic, parser):
    with pytest.raises(NpuSmiError) as caught:
        parser(synthetic('npu_smi_synthetic/error_dcmi_-8005.txt'))
    assert caught.value.code == -8005
    assert caught.value.message == 'dcmi module initialize failed. ret is -8005'


@pytest.mark.parametrize('text', ['', 'hello\n', '+----+\n| npu-smi 1.0   Version: 1.0 |\n+----+\n'])
def test_parse_info_rejects_text_without_table(text):
    with pytest.raises(ValueError, match='no npu-smi info table'):
        parse_info(text)


def test_parse_info_rejects_malformed_numbers(sample):
    broken = sample('npu-smi/910B4_25.0.rc1.1_info.txt').replace('87.2', 'hot!', 1)
    with pytest.raises(ValueError, match='Power'):
        parse_info(broken)


def test_info_list(sample):
    listing = parse_info_list(sample('npu-smi/910B4_25.0.rc1.1_info-l.txt'))
    assert listing['total_count'] == 8
    assert listing['npus'] == [{'npu_id': n, 'chip_count': 1} for n in range(8)]


def test_info_list_requires_total_count():
    with pytest.raises(ValueError, match='Total Count'):
        parse_info_list('        NPU ID                         : 0\n')


def test_info_mapping_indented_layout(sample):
    rows = parse_info_mapping(sample('npu-smi/910B4_25.0.rc1.1_info-m.txt'))
    assert len(rows) == 16
    assert rows[0] == {'npu_id': 0, 'chip_id': 0, 'chip_logic_id': 0, 'chip_name': 'Ascend 910B4'}
    assert rows[1] == {'npu_id': 0, 'chip_id': 1, 'chip_logic_id': None, 'chip_name': 'Mcu'}
    assert rows[14] == {'npu_id': 7, 'chip_id': 0, 'chip_logic_id': 7, 'chip_name': 'Ascend 910B4'}


def test_info_mapping_compact_layout(sample):
    assert parse_info_mapping(sample('npu-smi/310P3_25.5.2_info-m.txt')) == [
        {'npu_id': 32896, 'chip_id': 0, 'chip_logic_id': 0, 'chip_name': 'Ascend 310P3'},
        {'npu_id': 32896, 'chip_id': 1, 'chip_logic_id': None, 'chip_name': 'Mcu'},
    ]


def test_info_mapping_skips_a_version_line(sample):
    text = '        Version                        : 25.5.2\n' + sample('npu-smi/310P3_25.5.2_info-m.txt')
    assert [row['chip_name'] for row in parse_info_mapping(text)] == ['Ascend 310P3', 'Mcu']


def test_info_mapping_requires_header():
    with pytest.raises(ValueError, match='header'):
        parse_info_mapping('0 0 0 Ascend 910B4\n')


def test_board_of_npu(sample):
    board = parse_key_values(sample('npu-smi/910-D801_23.0.5_info-t-board-i0.txt'))
    assert board['Software Version'] == '23.0.5'
    assert board['Firmware Version'] == '7.1.0.7.220'
    assert board['Board ID'] == '0x02'
    assert board['PCIe Bus Info'] == '0000:61:00.0'
    assert board['PCI Device ID'] == '0xD801'
    assert board['Chip Count'] == '1'


def test_board_of_chip(sample):
    board = parse_key_values(sample('npu-smi/910-D801_23.0.5_info-t-board-i0-c0.txt'))
    assert board['Chip Name'] == 'xxx'
    assert board['VDie ID'] == '42C711D4 20B03704 4A10C8D4 14CC040A D2102003'
    assert board['Firmware Version'] == '7.1.0.7.220'
    assert board['PCB ID'] == 'NA'


def test_health(sample):
    assert parse_key_values(sample('npu-smi/910-D801_23.0.5_info-t-health-i0-c0.txt')) == {
        'Health Status': 'OK', 'Error Code': 'NA', 'Error Information': 'NA'}


def test_usages(sample):
    usages = parse_key_values(sample('npu-smi/910-D801_23.0.5_info-t-usages-i0.txt'))
    assert usages['HBM Capacity(MB)'] == '32768'
    assert usages['DDR Capacity(MB)'] == '13553'
    assert usages['Chip ID'] == '0'


def test_common_indented(sample):
    common = parse_key_values(sample('npu-smi/910-D801_unknown_info-t-common-i0.txt'))
    assert common['Temperature(C)'] == '41'
    assert common['NPU Real-time Power(W)'] == '71.7'
    assert common['Aicore Count'] == '30'


def test_ecc(sample):
    ecc = parse_key_values(sample('npu-smi/910-D801_23.0.5_info-t-ecc-i0.txt'))
    assert ecc['HBM Double Bit Error Count'] == '0'
    assert ecc['DDR Single Bit Aggregate Total Err Cnt'] == '0'
    assert len(ecc) == 15


def test_mcu_upgrade_outputs(sample):
    assert parse_key_values(sample('npu-smi/910B4_25.0.rc1.1_upgrade-b-mcu.txt')) == {'Version': '23.3.13'}
    activate = parse_key_values(sample('npu-smi/910B4_25.0.rc1.1_upgrade-a-mcu.txt'))
    assert activate['Status'] == 'OK'
    assert activate['Message'].startswith('The upgrade has taken effect')
    transfer = sample('npu-smi/910B4_25.0.rc1.1_upgrade-t-mcu.txt')
    assert parse_key_values(transfer) == {
        'Validity': 'success', 'transfile': 'successfully', 'Status': 'OK', 'Message': 'need active mcu'}
    assert [value for key, value in parse_key_value_records(transfer) if key == 'Message'] == [
        'Start device upgrade successfully', 'need active mcu']


@pytest.mark.parametrize('health, healthy', [
    ('OK', True), (' ok ', True), ('Warning', False), ('Alarm', False), ('Critical', False), ('UNKNOWN', False),
    ('', False), (None, False), ('OKAY', False),
])
def test_one_judgement_of_health(health, healthy):
    assert chip_is_healthy({'health': health}) is healthy
