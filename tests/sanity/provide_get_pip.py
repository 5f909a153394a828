# -*- coding: utf-8 -*-
# Copyright: npu.ascend contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Put ``get_pip_offline.py`` where ``ansible-test --venv`` looks for its cached get-pip script.

Run with the Python that has ansible-core installed (``make sanity`` uses the project venv). The
pip version in the cache file name is the one this ansible-test release asks for, read from
ansible-test itself so that an ansible-core upgrade in requirements.txt needs no change here.
A get-pip script that did not come from this file (a real download) is left alone.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import types

BOOTSTRAP_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'get_pip_offline.py')
OWN_SCRIPT_MARKER = 'Stand-in for the get-pip bootstrap script'
SANITY_PYTHON_VERSION = '3.11'


def wanted_pip_version():
    """The pip version ansible-test bootstraps into its virtual environments."""
    from ansible_test._internal.python_requirements import get_venv_packages  # pylint: disable=import-outside-toplevel
    return get_venv_packages(types.SimpleNamespace(version=SANITY_PYTHON_VERSION))['pip']


def cache_path_for(pip_version):
    """Where ansible-test expects the bootstrap script for ``pip_version``."""
    return os.path.expanduser('~/.ansible/test/cache/get_pip_%s.py' % pip_version.replace('.', '_'))


def main():
    """Install or refresh the bootstrap script; return an exit status."""
    with open(BOOTSTRAP_SOURCE) as source_file:
        bootstrap = source_file.read()

    cache_path = cache_path_for(wanted_pip_version())
    if os.path.exists(cache_path):
        with open(cache_path) as cached_file:
            cached = cached_file.read()
        if cached == bootstrap:
            return 0
        if OWN_SCRIPT_MARKER not in cached:
            print('provide_get_pip: keeping the get-pip script already at %s' % cache_path)
            return 0

    os.makedirs(os.path.dirname(cache_path), exist_ok=True)
    with open(cache_path, 'w') as cached_file:
        cached_file.write(bootstrap)
    print('provide_get_pip: installed the offline get-pip bootstrap at %s' % cache_path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
