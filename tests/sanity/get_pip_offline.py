# -*- coding: utf-8 -*-
# Copyright: npu.ascend contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-in for the get-pip bootstrap script that ``ansible-test --venv`` downloads.

ansible-test fetches its bootstrap script from a host this machine cannot reach, so
``provide_get_pip.py`` copies this file where ansible-test caches that script. It is run the same
way: as ``__main__`` inside a fresh virtual environment that has no pip, with pip-install
arguments such as ``--disable-pip-version-check pip==24.2 --no-setuptools --no-wheel``.

pip comes from the standard library's ``ensurepip`` (no network), then is moved to the requested
versions from the package index when that is reachable, so the environment ends up as the real
script would leave it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

# Options of the real get-pip script that are not pip-install options.
GET_PIP_ONLY_OPTIONS = ('--no-setuptools', '--no-wheel')


def run_python(arguments):
    """Run the environment's own Python with ``arguments``; return its exit status.

    Its output is shown only when it fails: ansible-test prints its own progress.
    """
    environment = dict(os.environ, LC_ALL='C', PIP_DISABLE_PIP_VERSION_CHECK='1')
    completed = subprocess.run([sys.executable] + list(arguments), env=environment, check=False,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if completed.returncode != 0:
        sys.stderr.write(completed.stdout)
    return completed.returncode


def installed_distributions():
    """Names of the distributions importable from this environment, lower-cased."""
    from importlib import metadata  # pylint: disable=import-outside-toplevel
    return set(distribution.metadata['Name'].lower() for distribution in metadata.distributions())


def main(arguments):
    """Bootstrap pip, then install what was asked for; return an exit status."""
    install_arguments = [argument for argument in arguments if argument not in GET_PIP_ONLY_OPTIONS]
    before = installed_distributions()

    status = run_python(['-m', 'ensurepip', '--upgrade', '--default-pip'])
    if status != 0:
        sys.stderr.write('get_pip_offline: ensurepip failed with status %d\n' % status)
        return status

    # Python's ensurepip also installs setuptools on some versions; the real script leaves it out
    # when asked, and ansible-test's sanity environments are built on that assumption.
    unwanted = []
    if '--no-setuptools' in arguments:
        unwanted.append('setuptools')
    if '--no-wheel' in arguments:
        unwanted.append('wheel')
    newly_installed_unwanted = [name for name in unwanted if name in installed_distributions() - before]
    if newly_installed_unwanted:
        status = run_python(['-m', 'pip', 'uninstall', '--yes', '--quiet'] + newly_installed_unwanted)
        if status != 0:
            return status

    if not [argument for argument in install_arguments if not argument.startswith('-')]:
        return 0

    status = run_python(['-m', 'pip', 'install', '--quiet'] + install_arguments)
    if status != 0:
        # Without the package index the bundled pip still lets ansible-test go on; its own
        # requirement installs will then report what is unreachable.
        sys.stderr.write('get_pip_offline: could not install %s from the package index; '
                         'keeping the pip that ensurepip bundles\n' % ' '.join(install_arguments))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
