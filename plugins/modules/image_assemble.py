#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: image_assemble
short_description: Assemble a container image archive from a Huawei component zip and a base image archive
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Runs on the controller only (an action plugin; nothing reaches a node). The P(npu.ascend.images#role) role uses it
    once per play for each image it delivers from a component package.
  - Huawei ships the device plugin and npu-exporter as zips (C(Ascend-mindxdl-device-plugin_<version>_linux-<arch>.zip))
    holding the binary, a C(Dockerfile) and the manifests. Building that Dockerfile needs a builder (Docker, buildah,
    nerdctl) that an air-gapped node may lack; containerd's C(ctr) imports images but builds none.
  - Instead, the files the Dockerfile's C(COPY) lines name are read from the zip into one layer on top of the layers
    of O(base), a C(docker save) or OCI layout archive of the image its C(FROM) names (Huawei's Dockerfile says
    C(ubuntu:22.04)); C(ENV), C(WORKDIR), C(USER), C(ENTRYPOINT) and C(CMD) go into the image config. The result,
    tagged O(image), is written to O(dest) as a C(docker save) archive that C(ctr images import) and C(docker load)
    take.
  - C(RUN) lines cannot be replayed without running the base image; they are left out and returned in RV(run_lines_left_out)
    (Huawei's adds a user C(HwHiAiUser) and tightens file modes; the DaemonSets run the plugin as root). C(ADD), C(COPY
    --from) and multi-stage builds are refused, as is a base image of another architecture than O(arch).
  - The same inputs give the same bytes; an O(dest) that already holds the image is not rewritten. The sha256 of
    O(package) and O(base) is for the caller to check first (the role checks both against C(SHA256SUMS)).
options:
  package:
    description: The component zip on the controller.
    type: path
    required: true
  base:
    description: The base image archive on the controller, one image for O(arch).
    type: path
    required: true
  image:
    description: The name:tag the archive carries, exactly as the DaemonSet names the image.
    type: str
    required: true
  arch:
    description: The architecture of the package and of the nodes that run the image.
    type: str
    required: true
    choices: [aarch64, x86_64]
  dest:
    description: The archive to write on the controller; its directory is created (mode 0700) when missing.
    type: path
    required: true
  dockerfile:
    description: The Dockerfile in the zip to follow (Huawei's device plugin zip also holds C(Dockerfile-310P-1usoc)).
    type: str
    default: Dockerfile
attributes:
  check_mode:
    support: full
    details:
      - Reads both archives and reports the same C(changed), writing nothing.
  diff_mode:
    support: none
  idempotent:
    support: full
  platform:
    platforms: posix
seealso:
  - module: npu.ascend.controller_files
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.attributes.CONTROLLER_ACTION
'''

EXAMPLES = r'''
- name: Assemble the device plugin's image from Huawei's zip on top of ubuntu:22.04
  npu.ascend.image_assemble:
    package: /srv/ascend/Ascend-mindxdl-device-plugin_7.3.0_linux-aarch64.zip
    base: /srv/ascend/ubuntu_22.04_linux-aarch64.tar
    image: ascend-k8sdeviceplugin:v7.3.0
    arch: aarch64
    dest: /var/cache/npu_ascend/images/ascend-k8sdeviceplugin_v7.3.0_linux-aarch64.tar
  run_once: true
  delegate_to: localhost
'''

RETURN = r'''
dest:
  description: The archive written (or that would be).
  returned: success
  type: str
image:
  description: The name:tag the archive carries.
  returned: success
  type: str
base_image:
  description: The image the Dockerfile's C(FROM) names, which O(base) stands for.
  returned: success
  type: str
  sample: ubuntu:22.04
files:
  description: The paths in the image the C(COPY) lines put there.
  returned: success
  type: list
  elements: str
  sample: [/usr/local/bin/device-plugin, /usr/local/faultCode.json]
run_lines_left_out:
  description: The C(RUN) lines left out.
  returned: success
  type: list
  elements: str
'''
