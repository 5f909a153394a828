# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The options and promises the container runtime config modules share
    # (plugins/module_utils/runtime_config/config_files.py).
    DOCUMENTATION = r'''
options:
  state:
    description:
      - V(present) registers, V(absent) undoes what V(present) changed, from the record kept beside the file.
    type: str
    choices: [present, absent]
    default: present
  backup:
    description:
      - Make a timestamped copy of the file (C(<file>.<pid>.<date>@<time>~), beside it) before changing it.
      - The copies are listed in the record of the change. O(state=absent) keeps them unless O(remove_backups=true).
    type: bool
    default: false
  remove_backups:
    description:
      - With O(state=absent), also delete the copies O(backup=true) made of this file, once the file is put back.
      - Only a path that is such a copy of this very file (same directory, the backup naming) is ever deleted;
        anything else the record lists is left in place and reported in RV(kept_backups).
    type: bool
    default: false
  lock_timeout:
    description:
      - Seconds to wait for the node lock C(/run/npu_ascend/lock), which every edit of an engine config and
        every installer run of this collection holds, so that two runs against one node at once lose nothing.
      - When another run holds it for longer, the module fails naming that run (pid, module, file, user, start
        time) and changes nothing. V(0) fails at once instead of waiting. Check mode takes no lock.
    type: int
    default: 600
notes:
  - A O(path) that is a symlink stays a symlink; the module edits, backs up and records against its target.
    A directory, a FIFO or another file that is not a regular file is refused before it is opened.
  - The record of the change is written (and flushed to disk) before the config, and the config is replaced
    atomically, so a run killed in between leaves a node that a rerun or O(state=absent) still undoes.
  - Values of credential keys in the file (C(auth), C(password), C(token), C(identitytoken), C(registrytoken),
    C(secret), C(authorization), any letter case, escapes decoded), registry header values and the userinfo of
    URLs are shown as C(********) on both sides of the diff.
  - O(state=absent) takes out only what O(state=present) put in, from the file as it is now; an entry someone
    changed since the module wrote it is kept, with a warning.
'''

    RUNC_REWRITE = r'''
options:
  allow_runc_rewrite:
    description:
      - Allow O(name=runc). C(runc) is the runtime new runtimes copy and the engines' fallback default, so
        registering (or removing) under that name is refused unless this is V(true).
    type: bool
    default: false
'''
