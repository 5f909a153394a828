# -*- coding: utf-8 -*-
"""Run npu_vnpu against a stand-in npu-smi that keeps a chip's vNPUs in a JSON file."""

import json
import os
import socket
import stat
import sys

import pytest

from ansible_collections.npu.ascend.plugins.modules import npu_vnpu

SYNTHETIC = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'npu_smi_synthetic')

INFO_M = '''NPU ID       Chip ID       Chip Logic ID       Chip Name
1            0             0                   Ascend 310P3
1            1             1                   Ascend 310P3
1            2             -                   Mcu
'''

# A stand-in npu-smi for one 310P3 card: only what npu_vnpu runs, no capacity rules (the module's
# own judgement is what is tested; the simulator's rules are tested in tests/sandbox).
FAKE = r'''#!%(python)s
import json, sys
state_path, log_path = %(state)r, %(log)r
argv = sys.argv[1:]
open(log_path, "a").write(" ".join(argv) + "\n")
state = json.load(open(state_path))
def opt(flag):
    return argv[argv.index(flag) + 1] if flag in argv else None
def save():
    json.dump(state, open(state_path, "w"))
if argv == ["info", "-m"]:
    sys.stdout.write(state.get("info_m") or %(info_m)r)
elif argv[:3] == ["info", "-t", "template-info"]:
    if state.get("mixed_cards") and "-i" not in argv:
        print("There are different types of cards on the server. Run npu-smi info -t template-info -i id to query.")
    sys.stdout.write(open(state.get("templates") or %(templates)r).read())
elif argv[:3] == ["info", "-t", "vnpu-mode"]:
    print("\tvnpu-mode                      : " + ("VM" if state["mode"] == "vm" else state["mode"]))
elif argv[:3] == ["info", "-t", "vnpu-cfg-recover"]:
    print("VNPU config recover mode : " + ("Enable" if state["recover"] else "Disable"))
elif argv[:3] == ["info", "-t", "info-vnpu"] and state.get("info_vnpu"):
    sys.stdout.write(state["info_vnpu"])
elif argv[:3] == ["info", "-t", "info-vnpu"] and state["mode"] == "vm":
    print("The vnpu is not in docker mode, does not support querying info-vnpu.")
elif argv[:3] == ["set", "-t", "create-vnpu"] and state["mode"] == "vm":
    print("The vnpu is not in docker mode, does not support setting create-vnpu.")
elif argv[:3] == ["info", "-t", "info-vnpu"]:
    vnpus = [v for v in state["vnpus"] if [v["npu"], v["chip"]] == [int(opt("-i")), int(opt("-c"))]]
    print("| AICORE    Memory    AICPU |\n" + state.get("resources", "| 8/8       24/24     8/8   |"))
    print("| Total number of vnpu: %%d |" %% len(vnpus))
    print("|  Vnpu ID  |  Vgroup ID     |  Container ID  |  Status  |  Template Name       |")
    for v in vnpus:
        used = v["id"] in state["in_use"]
        print("|  %%d  |  %%d  |  %%s  |  %%s  |  %%s  |" %% (v["id"], v["vgroup"], "c0ffeec0ffee" if used else "000000000000",
                                                  "1" if used else "0", v["template"]))
elif argv[:3] == ["set", "-t", "vnpu-mode"]:
    state["mode"] = "docker" if opt("-d") == "0" else "vm"; save(); print("Status : OK\nMessage : ok")
elif argv[:3] == ["set", "-t", "vnpu-cfg-recover"]:
    state["recover"] = opt("-d") == "1"; save(); print("Status : OK\nMessage : ok")
elif argv[:3] == ["set", "-t", "create-vnpu"]:
    if state.get("refuse_create"):
        print("\tStatus : FAILED\n\tMessage : Create vnpu failed. The resources of the device are not enough."); sys.exit(1)
    taken = [v["id"] for v in state["vnpus"]]
    vnpu_id = int(opt("-v")) if opt("-v") else min(i for i in range(100 + 16 * int(opt("-c")), 200) if i not in taken)
    vgroup = int(opt("-g")) if opt("-g") else len([v for v in state["vnpus"] if v["chip"] == int(opt("-c"))])
    state["vnpus"].append({"npu": int(opt("-i")), "chip": int(opt("-c")), "id": vnpu_id, "vgroup": vgroup,
                           "template": opt("-f")})
    save(); print("\tStatus                         : OK\n\tMessage                        : Create vnpu success")
elif argv[:3] == ["set", "-t", "destroy-vnpu"]:
    vnpu_id = int(opt("-v"))
    if vnpu_id in state["in_use"]:
        print("\tStatus : FAILED\n\tMessage : Destroy vnpu %%d failed. The vnpu is in use." %% vnpu_id); sys.exit(1)
    state["vnpus"] = [v for v in state["vnpus"] if v["id"] != vnpu_id]
    save(); print("  Status : OK\n  Message : Destroy vnpu %%d success" %% vnpu_id)
else:
    print("unexpected " + " ".join(argv)); sys.exit(9)
'''


class Chip(object):
    def __init__(self, tmp_path, vnpus=(), mode='docker', recover=True, in_use=(), **extra):
        self.state_path = tmp_path / 'state.json'
        self.log_path = tmp_path / 'calls.log'
        self.state_path.write_text(json.dumps(dict({'vnpus': list(vnpus), 'mode': mode, 'recover': recover,
                                                    'in_use': list(in_use)}, **extra)))
        self.binary = tmp_path / 'npu-smi'
        self.binary.write_text(FAKE % {'python': sys.executable, 'state': str(self.state_path),
                                       'log': str(self.log_path), 'info_m': INFO_M,
                                       'templates': os.path.join(SYNTHETIC, 'template-info_310P3.txt')})
        self.binary.chmod(self.binary.stat().st_mode | stat.S_IXUSR)

    @property
    def state(self):
        return json.loads(self.state_path.read_text())

    def calls(self):
        return self.log_path.read_text().splitlines() if self.log_path.exists() else []

    def sets(self):
        return [call for call in self.calls() if call.startswith('set ')]

    def args(self, vnpus, **extra):
        return dict({'binary_path': str(self.binary), 'npu_id': 1, 'chip_id': 1, 'vnpus': vnpus}, **extra)


def _vnpu(vnpu_id, template, vgroup=0, chip=1):
    return {'npu': 1, 'chip': chip, 'id': vnpu_id, 'vgroup': vgroup, 'template': template}


def test_creates_the_layout_then_changes_nothing(tmp_path, run_module):
    chip = Chip(tmp_path, mode='vm', recover=False)
    layout = [{'template': 'vir02'}, {'template': 'vir02'}, {'template': 'vir04', 'id': 120}]
    result = run_module(npu_vnpu, chip.args(layout))
    assert result['changed'] is True, result
    assert chip.sets() == ['set -t vnpu-mode -d 0', 'set -t vnpu-cfg-recover -d 1',
                           'set -t create-vnpu -i 1 -c 1 -f vir04 -v 120',
                           'set -t create-vnpu -i 1 -c 1 -f vir02', 'set -t create-vnpu -i 1 -c 1 -f vir02']
    assert result['resources'] == {'Ascend310P-2c': 2, 'Ascend310P-4c': 1}
    assert sorted(v['resource'] for v in result['vnpus']) == ['Ascend310P-2c', 'Ascend310P-2c', 'Ascend310P-4c']
    assert result['chip'] == {'npu_id': 1, 'chip_id': 1, 'name': '310P3', 'family': '310P', 'phy_id': 1}
    assert result['diff']['before'] == ''
    assert 'vir04 id 120' in result['diff']['after']

    again = run_module(npu_vnpu, chip.args(layout))
    assert again['changed'] is False
    assert len(chip.sets()) == 5


def test_check_mode_reports_the_same_change_and_changes_nothing(tmp_path, run_module):
    chip = Chip(tmp_path, vnpus=[_vnpu(116, 'vir04')])
    result = run_module(npu_vnpu, chip.args([{'template': 'vir02'}, {'template': 'vir02'}]), check_mode=True)
    assert result['changed'] is True
    assert result['plan'] == {'destroy': ['vir04 id 116 vgroup 0'], 'create': ['vir02', 'vir02'], 'mode': False,
                              'recover': False, 'change': True, 'in_use': []}
    assert chip.sets() == []
    assert chip.state['vnpus'] == [_vnpu(116, 'vir04')]


def test_only_the_difference_is_touched(tmp_path, run_module):
    chip = Chip(tmp_path, vnpus=[_vnpu(116, 'vir02', 0), _vnpu(117, 'vir04', 1), _vnpu(100, 'vir04', 0, chip=0)])
    result = run_module(npu_vnpu, chip.args([{'template': 'vir02'}, {'template': 'vir02_1c'}]))
    assert result['changed'] is True
    assert chip.sets() == ['set -t destroy-vnpu -i 1 -c 1 -v 117', 'set -t create-vnpu -i 1 -c 1 -f vir02_1c']
    # The other chip's vNPU is not this task's business.
    assert _vnpu(100, 'vir04', 0, chip=0) in chip.state['vnpus']


def test_empty_layout_gives_the_chip_back(tmp_path, run_module):
    chip = Chip(tmp_path, vnpus=[_vnpu(116, 'vir02'), _vnpu(117, 'vir02', 1)])
    assert run_module(npu_vnpu, chip.args([]))['changed'] is True
    assert chip.state['vnpus'] == []


def test_unknown_template_refused_before_any_change(tmp_path, run_module):
    chip = Chip(tmp_path, vnpus=[_vnpu(116, 'vir02')])
    result = run_module(npu_vnpu, chip.args([{'template': 'vir08'}]))
    assert result['failed']
    assert 'NPU 1 chip 1 (310P3)' in result['msg']
    assert 'vir08 is not one this chip lists' in result['msg'] and 'Fix:' in result['msg']
    assert chip.sets() == []


def test_over_full_layout_refused(tmp_path, run_module):
    chip = Chip(tmp_path)
    result = run_module(npu_vnpu, chip.args([{'template': 'vir04'}, {'template': 'vir04'}, {'template': 'vir01'}]))
    assert result['failed'] and 'needs 10 AI cores, the chip has 8' in result['msg']
    assert chip.sets() == []


def test_in_use_refused_unless_forced(tmp_path, run_module):
    chip = Chip(tmp_path, vnpus=[_vnpu(116, 'vir02'), _vnpu(117, 'vir04', 1)], in_use=[117])
    result = run_module(npu_vnpu, chip.args([{'template': 'vir02'}]))
    assert result['failed']
    assert 'destroys vir04 id 117 vgroup 1 (in use by container c0ffeec0ffee)' in result['msg']
    assert 'drain the node first' in result['msg']
    assert chip.sets() == []
    # Forced, npu-smi is asked, and its own refusal (the container still runs) is the message.
    forced = run_module(npu_vnpu, chip.args([{'template': 'vir02'}], force=True))
    assert forced['failed'] and 'could not destroy vNPU vir04 id 117' in forced['msg']
    assert 'in use' in forced['msg']


def test_refused_create_is_a_message(tmp_path, run_module):
    chip = Chip(tmp_path, refuse_create=True)
    result = run_module(npu_vnpu, chip.args([{'template': 'vir02'}]))
    assert result['failed']
    assert 'could not create vNPU vir02' in result['msg'] and 'not enough' in result['msg']


def test_unknown_chip_and_bad_timeout(tmp_path, run_module):
    chip = Chip(tmp_path)
    result = run_module(npu_vnpu, dict(chip.args([]), chip_id=5))
    assert result['failed'] and 'lists no chip 5 of NPU 1' in result['msg']
    result = run_module(npu_vnpu, dict(chip.args([]), timeout=0))
    assert result['failed'] and 'timeout must be a positive' in result['msg']


def test_waits_for_the_node_lock_and_names_its_holder(tmp_path, run_module, held_by_another_process,
                                                      node_lock_in_tmp):
    chip = Chip(tmp_path)
    with held_by_another_process(node_lock_in_tmp, {'module': 'npu.ascend.ascend_runfile', 'target': 'driver'}):
        result = run_module(npu_vnpu, chip.args([{'template': 'vir02'}], lock_timeout=1))
    assert result['failed'] and 'NPU 1 chip 1: vNPUs not changed' in result['msg']
    assert 'ascend_runfile' in result['msg']
    assert chip.sets() == []
    # Check mode takes no lock: the plan is read while another run holds it.
    with held_by_another_process(node_lock_in_tmp, {'module': 'npu.ascend.ascend_runfile', 'target': 'driver'}):
        assert run_module(npu_vnpu, chip.args([{'template': 'vir02'}], lock_timeout=1), check_mode=True)['changed']


LEGACY_910_INFO_M = """        NPU ID                         Chip ID                        Chip Logic ID                  Chip Name
        1                              0                              0                              Ascend 910B
        1                              1                              1                              Ascend 910B
"""


def test_a_chip_in_vm_mode_is_switched_to_containers_then_split(tmp_path, run_module):
    # npu-smi answers info-vnpu in VM mode with a sentence and exit status 0 (its source).
    chip = Chip(tmp_path, mode='vm')
    planned = run_module(npu_vnpu, chip.args([{'template': 'vir02'}]), check_mode=True)
    assert planned['changed'] is True, planned
    assert planned['plan']['mode'] is True and planned['plan']['create'] == ['vir02']
    assert not any('info-vnpu' in call for call in chip.calls())
    result = run_module(npu_vnpu, chip.args([{'template': 'vir02'}]))
    assert result['changed'] is True, result
    assert chip.sets() == ['set -t vnpu-mode -d 0', 'set -t create-vnpu -i 1 -c 1 -f vir02']
    assert [v['template'] for v in result['vnpus']] == ['vir02']


@pytest.mark.parametrize('answer, cause', [
    ('The vnpu is not in docker mode, does not support querying info-vnpu.\n', 'VM mode'),
    ('NPU is working in SMP mode, does not support vnpu query.\n', 'SMP mode'),
    ('This command cannot be executed on a VM or container.\n', 'VM or a container'),
])
def test_a_refusal_printed_with_success_names_the_chip_the_command_and_the_cause(tmp_path, run_module, answer, cause):
    chip = Chip(tmp_path, info_vnpu=answer)
    result = run_module(npu_vnpu, chip.args([{'template': 'vir02'}]), check_mode=True)
    assert result['failed'], result
    message = result['msg']
    assert 'node %s: NPU 1 chip 1 (310P3)' % socket.gethostname() in message
    assert 'npu-smi info -t info-vnpu -i 1 -c 1' in message and answer.strip() in message
    assert cause in message and 'Fix:' in message
    assert 'driver version' not in message


def test_an_output_nobody_has_seen_names_the_node_chip_command_and_first_line(tmp_path, run_module):
    chip = Chip(tmp_path, info_vnpu='\nVNPU table moved to a web page\n| 8/8 |\n')
    result = run_module(npu_vnpu, chip.args([{'template': 'vir02'}]), check_mode=True)
    assert result['failed']
    assert 'node %s: NPU 1 chip 1 (310P3)' % socket.gethostname() in result['msg']
    assert 'npu-smi info -t info-vnpu -i 1 -c 1' in result['msg']
    assert "first line: 'VNPU table moved to a web page'" in result['msg']


def test_legacy_910_chips_are_split_with_their_templates(tmp_path, run_module):
    templates = tmp_path / 'templates.txt'
    templates.write_text(open(os.path.join(SYNTHETIC, 'template-info_mixed-cards.txt')).read().split('\n', 1)[1])
    chip = Chip(tmp_path, info_m=LEGACY_910_INFO_M, templates=str(templates), resources='| 30/30     32/32     7/7   |')
    result = run_module(npu_vnpu, chip.args([{'template': 'vir16'}, {'template': 'vir02'}]))
    assert result['changed'] is True, result
    assert result['chip']['family'] == '910'
    assert result['resources'] == {'Ascend910-16c': 1, 'Ascend910-2c': 1}
    assert chip.sets()[-2:] == ['set -t create-vnpu -i 1 -c 1 -f vir16', 'set -t create-vnpu -i 1 -c 1 -f vir02']


# An A3 names its dies Ascend910 (no space) and adds a Chip Phy-ID column; the MCU is chip 2.
A3_INFO_M = """        NPU ID                         Chip ID                        Chip Logic ID                  Chip Phy-ID                    Chip Name
        0                              0                              0                              0                              Ascend910
        0                              1                              1                              1                              Ascend910
        0                              2                              -                              -                              Mcu
        1                              0                              2                              2                              Ascend910
        1                              1                              3                              3                              Ascend910
        1                              2                              -                              -                              Mcu
"""


def test_an_a3_die_is_split_with_the_a3_templates(tmp_path, run_module):
    chip = Chip(tmp_path, info_m=A3_INFO_M, templates=os.path.join(SYNTHETIC, 'template-info_A3-training.txt'),
                resources='| 24/24     64/64     7/7   |')
    layout = [{'template': 'vir12_3c_32g'}, {'template': 'vir06_1c_16g'}, {'template': 'vir06_1c_16g'}]
    result = run_module(npu_vnpu, chip.args(layout))
    assert result['changed'] is True, result
    assert result['chip'] == {'npu_id': 1, 'chip_id': 1, 'name': 'Ascend910', 'family': 'A3', 'phy_id': 3}
    assert result['resources'] == {'Ascend910-12c.3cpu.32g': 1, 'Ascend910-6c.1cpu.16g': 2}
    assert run_module(npu_vnpu, chip.args(layout))['changed'] is False
    # An inference die's template on a training die is refused before anything changes.
    before = len(chip.sets())
    refused = run_module(npu_vnpu, chip.args([{'template': 'vir10_3c_32g'}]))
    assert refused['failed'] and 'NPU 1 chip 1 (Ascend910)' in refused['msg']
    assert 'vir10_3c_32g is not one this chip lists' in refused['msg'] and len(chip.sets()) == before


def test_template_info_with_na_ai_cores_plans_in_check_mode(tmp_path, run_module):
    # Issue 40: AICORE NA in template-info raised a TypeError (a traceback) while planning.
    chip = Chip(tmp_path, templates=os.path.join(SYNTHETIC, 'template-info_310P3_na-aicore.txt'))
    result = run_module(npu_vnpu, chip.args([{'template': 'vir02'}, {'template': 'vir04'}]), check_mode=True)
    assert result['changed'] is True, result
    over_full = run_module(npu_vnpu, chip.args([{'template': 'vir04'}, {'template': 'vir04'}, {'template': 'vir02'}]),
                           check_mode=True)
    assert over_full['failed'] and 'needs 10 AI cores, the chip has 8' in over_full['msg']


def test_a_server_with_mixed_cards_asks_for_this_card_s_templates(tmp_path, run_module):
    chip = Chip(tmp_path, mixed_cards=True)
    result = run_module(npu_vnpu, chip.args([{'template': 'vir02'}]), check_mode=True)
    assert result['changed'] is True, result
    assert 'info -t template-info -i 1' in chip.calls()


def test_a_vnpu_whose_template_npu_smi_cannot_read_is_a_message(tmp_path, run_module):
    chip = Chip(tmp_path, vnpus=[_vnpu(116, 'NA')])
    result = run_module(npu_vnpu, chip.args([{'template': 'vir02'}]), check_mode=True)
    assert result['failed']
    assert 'NPU 1 chip 1 (310P3)' in result['msg'] and 'vNPU 116' in result['msg'] and 'Fix:' in result['msg']
