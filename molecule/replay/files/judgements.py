"""The judgements of preflight, the doctor and the fleet report on each node, out of the runs converge
made (ansible.posix.json output and fleet-report.json), and the round trip's comparison.

    python3 judgements.py <run dir> [<original> <copy>]

Prints {"<node>": {"preflight": ..., "doctor": [...], "report": {...}}} as JSON. With two nodes it
also compares the copy with its original and exits 1, naming every difference, when they are not
judged alike: the same preflight checks with the same outcome, detail and fix (the node's name
aside) except the two whose input a bundle does not carry (the kernel headers installed from the
distribution, and whether the driver's modules were built by DKMS: the node's packages, which no
read of the collection records), the same plan, the same doctor findings, the same report entry.
"""
import json
import os
import re
import sys

# Preflight checks judged from the node's distribution packages, which a bundle does not record:
# their outcome must agree, their detail may not.
PACKAGE_STATE_CHECKS = ('kernel headers', 'NPU kernel modules')


def _task_results(path, task_suffix):
    with open(path) as handle:
        text = handle.read()
    # The JSON document starts at the first line that is "{": molecule's profile_tasks callback prints its
    # timings on the same stdout, before and after it.
    start = 0 if text.startswith('{') else text.find('\n{\n') + 1
    try:
        document = json.JSONDecoder().raw_decode(text[start:])[0]
    except ValueError as error:
        raise SystemExit('%s holds no JSON of ansible.posix.json (%s); its run printed: %s' % (path, error, text[-2000:]))
    for play in document.get('plays', []):
        for task in play.get('tasks', []):
            if task['task']['name'].endswith(task_suffix):
                for host, result in task['hosts'].items():
                    yield host, result


def judgements(run_dir):
    nodes = {}
    for host, result in _task_results(os.path.join(run_dir, 'preflight.json'),
                                      'Judge the node and publish the plan and the report for later plays'):
        nodes.setdefault(host, {})['preflight'] = result['ansible_facts']['preflight_report']
    for name in sorted(os.listdir(run_dir)):
        if name.startswith('doctor') and name.endswith('.json'):
            for host, result in _task_results(os.path.join(run_dir, name), "Publish this node's findings"):
                nodes.setdefault(host, {})['doctor'] = result['ansible_facts']['doctor_findings']
    with open(os.path.join(run_dir, 'report', 'fleet-report.json')) as handle:
        for host, entry in json.load(handle)['nodes'].items():
            nodes.setdefault(host, {})['report'] = entry
    return nodes


def _renamed(value, original, copy):
    """``value`` with the copy's name, where it stands as a name of its own, spelt as the original's."""
    pattern = r'(?<![\w.-])' + re.escape(copy) + r'(?![\w-])'
    return json.loads(re.sub(pattern, original, json.dumps(value)))


def differences(nodes, original, copy):
    found = []
    first, second = nodes.get(original, {}), _renamed(nodes.get(copy, {}), original, copy)
    for part in ('preflight', 'doctor', 'report'):
        if part not in first or part not in second:
            found.append('%s: no %s judgement of %s' % (part, part, original if part not in first else copy))
    if found:
        return found
    checks = [dict(check, detail=None) if check['name'] in PACKAGE_STATE_CHECKS else check
              for check in first['preflight']['checks']]
    copied = [dict(check, detail=None) if check['name'] in PACKAGE_STATE_CHECKS else check
              for check in second['preflight']['checks']]
    if checks != copied:
        found.append('preflight checks: %s\n  != %s' % (json.dumps(checks), json.dumps(copied)))
    for key in ('plan', 'failed'):
        if first['preflight'].get(key) != second['preflight'].get(key):
            found.append('preflight %s: %s != %s' % (key, first['preflight'].get(key), second['preflight'].get(key)))
    if first['doctor'] != second['doctor']:
        found.append('doctor findings: %s\n  != %s' % (json.dumps(first['doctor']), json.dumps(second['doctor'])))
    if first['report'] != second['report']:
        keys = sorted(key for key in set(first['report']) | set(second['report'])
                      if first['report'].get(key) != second['report'].get(key))
        found.append('report entry differs in %s: %s' % (', '.join(keys), json.dumps(
            dict((key, [first['report'].get(key), second['report'].get(key)]) for key in keys))))
    return found


def main(argv):
    nodes = judgements(argv[1])
    print(json.dumps(nodes, indent=1, sort_keys=True))
    if len(argv) == 4:
        found = differences(nodes, argv[2], argv[3])
        if found:
            sys.stderr.write('%s is not judged as its original %s:\n- %s\n' % (argv[3], argv[2], '\n- '.join(found)))
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
