# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """The attributes every module of the collection documents.

    DOCUMENTATION says what each attribute means; a module sets C(support) (and C(details) where it
    is not plain) in its own C(attributes:) block, which takes precedence over a fragment's values.
    READ_ONLY is the whole answer for a module that changes nothing, FACTS adds the facts attribute,
    CONTROLLER_ACTION the attributes of an action plugin that runs on the controller only.
    """

    DOCUMENTATION = r'''
options: {}
attributes:
  check_mode:
    description:
      - Can run in check mode and then reports the C(changed) the real run would report, without
        changing the node.
  diff_mode:
    description:
      - Returns the details of what changed (or, in check mode, would change) when run in diff mode.
  idempotent:
    description:
      - Run twice in a row with the same arguments (outside check mode), the second run reports no change
        and changes nothing.
  platform:
    description: The target systems the module runs on.
    support: full
    platforms: posix
'''

    READ_ONLY = r'''
options: {}
attributes:
  check_mode:
    support: full
    details:
      - The module only reads, so check mode runs it exactly as a real run does.
  diff_mode:
    support: N/A
    details:
      - The module changes nothing, so there is no difference to show.
  idempotent:
    support: full
'''

    FACTS = r'''
options: {}
attributes:
  facts:
    description: Returns C(ansible_facts).
    support: full
'''

    CONTROLLER_ACTION = r'''
options: {}
attributes:
  action:
    description: Runs on the controller as an action plugin.
    support: full
  async:
    description: Cannot run asynchronously.
    support: none
'''
