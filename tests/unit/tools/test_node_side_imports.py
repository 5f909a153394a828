# -*- coding: utf-8 -*-
"""What the modules ship to every node: the module_utils they import, transitively. The controller-side
helpers (the Kubernetes labels, the planner's judgements) stay on the controller."""
import os
import re

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODULE_UTILS = os.path.join(REPO_ROOT, 'plugins', 'module_utils')
# ``from <module_utils>[.package[.module]] import names``: each name is a module of that package, or a name in
# that module.
_IMPORT = re.compile(r'^\s*from ansible_collections\.npu\.ascend\.plugins\.module_utils((?:\.\w+)*) import '
                     r'(\([^)]*\)|[\w, ]+)', re.MULTILINE)
CONTROLLER_ONLY = {'k8s.npu_labels'}
# Modules that run on the controller only (the roles delegate them to localhost): they write Kubernetes
# objects with the controller's kubeconfig and may use the controller-side helpers.
CONTROLLER_MODULES = {'k8s_fleet_nodes.py', 'k8s_fleet_validate.py'}


def _file_of(dotted):
    """The file of a module_utils module named by its dotted path under module_utils, or None (a package, a name)."""
    path = os.path.join(MODULE_UTILS, *dotted.split('.')) + '.py'
    return path if os.path.isfile(path) else None


def _imported(path):
    """The module_utils modules ``path`` imports, by their dotted path under module_utils (``hardware.pci``)."""
    with open(path, encoding='utf-8') as handle:
        text = handle.read()
    modules = set()
    for package, imported in _IMPORT.findall(text):
        package = package.lstrip('.')
        if package and _file_of(package):
            modules.add(package)
            continue
        for name in imported.replace('(', ' ').replace(')', ' ').split(','):
            name = name.strip().split(' as ')[0].strip()
            if name and _file_of('.'.join(filter(None, (package, name)))):
                modules.add('.'.join(filter(None, (package, name))))
    return modules


def _shipped(path):
    shipped, todo = set(), list(_imported(path))
    while todo:
        name = todo.pop()
        if name in shipped:
            continue
        shipped.add(name)
        todo.extend(_imported(_file_of(name)))
    return shipped


def test_no_module_ships_a_controller_only_helper():
    modules_dir = os.path.join(REPO_ROOT, 'plugins', 'modules')
    shipped = dict((name, _shipped(os.path.join(modules_dir, name)) & CONTROLLER_ONLY)
                   for name in os.listdir(modules_dir) if name.endswith('.py') and name not in CONTROLLER_MODULES)
    assert dict((name, found) for name, found in shipped.items() if found) == {}
    # The check sees imports at all: the probe ships the npu-smi parser.
    assert 'hardware.npu_smi' in _shipped(os.path.join(modules_dir, 'ascend_facts.py'))
    # ... and follows them: the catalogue comes through the npu-smi runner.
    assert 'hardware.hardware_catalogue' in _shipped(os.path.join(modules_dir, 'ascend_facts.py'))
    assert 'k8s.npu_labels' in _shipped(os.path.join(modules_dir, 'k8s_fleet_nodes.py'))


def test_the_controller_modules_say_so_and_every_role_delegates_them_to_the_controller():
    roles = os.path.join(REPO_ROOT, 'roles')
    for name in CONTROLLER_MODULES:
        with open(os.path.join(REPO_ROOT, 'plugins', 'modules', name), encoding='utf-8') as handle:
            assert 'Runs on the controller (C(delegate_to localhost)' in handle.read(), name
    for directory, _dirs, files in os.walk(roles):
        for file_name in files:
            if not file_name.endswith('.yml'):
                continue
            with open(os.path.join(directory, file_name), encoding='utf-8') as handle:
                text = handle.read()
            for name in CONTROLLER_MODULES:
                if 'npu.ascend.%s:' % name[:-3] in text:
                    # The block around the task delegates it (roles/k8s_node, roles/validate).
                    assert 'delegate_to: localhost' in text, (directory, file_name, name)
