# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.images_plan``, ``npu.ascend.images_judgement``,
``npu.ascend.images_import_problems``, ``npu.ascend.images_bundle`` and
``npu.ascend.images_registry_reference`` of roles/images (and of the roles whose pods name the images).

Documentation is in the sidecar files of the same names; the decisions are in
plugins/plugin_utils/image_delivery.py.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError


def images_plan(wanted, listing, arch, base_archive=''):
    """Which wanted images the node's engine lacks, and the archive of each."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils import image_delivery
    if isinstance(wanted, (str, Mapping)) or not isinstance(wanted, (list, tuple)):
        raise AnsibleFilterError('images_plan: images_wanted must be a list of image references or of dicts '
                                 'with image (and file_name), got %s' % type(wanted).__name__)
    try:
        return image_delivery.plan(list(wanted), listing or '', str(arch), str(base_archive or ''))
    except image_delivery.ImageReferenceError as error:
        raise AnsibleFilterError('images_plan: %s' % error)


def images_judgement(entries, sums=None, source_dir='', source_files=None, allow_unverified=False):
    """The plan with, for each missing image, whether its archive may be loaded."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import image_delivery
    if sums is not None and not isinstance(sums, Mapping):
        raise AnsibleFilterError('images_judgement: sums (images_sha256sums) must be a dict of file name to sha256, '
                                 'got %s' % type(sums).__name__)
    return image_delivery.judgement(list(entries or []), dict(sums or {}), source_dir or '',
                                    dict(source_files or {}), bool(allow_unverified))


def images_import_problems(entries, listing_before, listing_after, engine='containerd'):
    """Why images are still missing after their archives were imported ([] when none is)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import image_delivery
    return image_delivery.import_problems(list(entries or []), listing_before or '', listing_after or '', str(engine))


def images_bundle(plans_by_host, sums=None, source_dir='', source_files=None, allow_unverified=False):
    """The files of the package source the fleet's images come from, each once, problems first."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import image_delivery
    if not isinstance(plans_by_host, Mapping):
        raise AnsibleFilterError('images_bundle expects host -> images plan (npu.ascend.host_values), got %s'
                                 % type(plans_by_host).__name__)
    return image_delivery.bundle(dict(plans_by_host), dict(sums or {}), source_dir or '', dict(source_files or {}),
                                 bool(allow_unverified))


def images_registry_reference(image, registry=''):
    """The name pods pull ``image`` by from ``registry`` (``<registry>/<name>:<tag>``), or ``image`` unchanged
    when no registry is given."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import image_delivery, registry_push
    if not registry:
        return image
    try:
        return registry_push.registry_reference(str(image), str(registry))
    except (image_delivery.ImageReferenceError, registry_push.RegistryError) as error:
        raise AnsibleFilterError('images_registry_reference: %s' % error)


class FilterModule:
    """Ansible filter plugin entry point."""

    def filters(self):
        return {
            'images_plan': images_plan,
            'images_judgement': images_judgement,
            'images_import_problems': images_import_problems,
            'images_bundle': images_bundle,
            'images_registry_reference': images_registry_reference,
        }
