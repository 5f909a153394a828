#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: image_push
short_description: Push one image of an image archive to a registry, only what the registry lacks
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Runs on the controller only (an action plugin; nothing reaches a node). The P(npu.ascend.images#role) role uses it
    once per play for each image, with C(images_registry) set.
  - Reads the image tagged O(image) (or the only one) from O(archive), a C(docker save) archive or an OCI layout
    archive - the archives the node delivery loads, or those M(npu.ascend.image_assemble) writes - and pushes it to
    O(registry) as C(<registry>/<name>:<tag>), C(name) being the last component of the image's path, with the OCI
    distribution API over HTTPS in plain Python (no Docker, skopeo or crane on the controller).
  - Asks for the manifest by tag (HEAD) first; when the registry has the same digest nothing else is sent. Otherwise
    each blob is asked for by digest and only those the registry lacks are uploaded (one PUT each), the manifest last.
    An OCI layout's manifest is pushed byte for byte (same digest); a C(docker save) archive gets an OCI manifest made
    from its config and layers.
  - The registry's certificate is verified against O(ca_file) (or the controller's CAs). A plain-HTTP registry
    (C(http://)) or an unverified certificate is refused unless O(insecure). Every failure names the registry, the
    image, the HTTP status or cause, and the fix; every request has a timeout.
options:
  archive:
    description: The image archive on the controller.
    type: path
    required: true
  image:
    description: The name:tag of the image in the archive, as the DaemonSet names it without the registry.
    type: str
    required: true
  registry:
    description: The registry and path to push under, C(host[:port][/path]) (C(https://) may be written; C(http://) needs O(insecure)).
    type: str
    required: true
  ca_file:
    description: PEM file of the CA that signed the registry's certificate. Empty - the controller's CAs.
    type: path
    default: ""
  username:
    description: Account for a registry that asks for one (Basic or Bearer token authentication).
    type: str
    default: ""
  password:
    description: Its password or token.
    type: str
    default: ""
  insecure:
    description: Accept a plain-HTTP registry or a certificate that cannot be verified. Anyone on the path could then replace the images.
    type: bool
    default: false
  timeout:
    description: Seconds each request may take.
    type: float
    default: 60
attributes:
  check_mode:
    support: full
    details:
      - Asks the registry what it has and reports the same C(changed) and RV(uploaded), sending nothing.
  diff_mode:
    support: none
  idempotent:
    support: full
  platform:
    platforms: posix
seealso:
  - module: npu.ascend.image_assemble
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.attributes.CONTROLLER_ACTION
'''

EXAMPLES = r'''
- name: Push the device plugin's image to the site's registry
  npu.ascend.image_push:
    archive: /srv/ascend/ascend-k8sdeviceplugin_v7.3.0_linux-aarch64.tar
    image: ascend-k8sdeviceplugin:v7.3.0
    registry: registry.example.com:5000/ascend
    ca_file: /etc/pki/site-ca.pem
  run_once: true
  delegate_to: localhost
'''

RETURN = r'''
reference:
  description: The name the pods pull the image by.
  returned: success
  type: str
  sample: registry.example.com:5000/ascend/ascend-k8sdeviceplugin:v7.3.0
digest:
  description: The manifest digest of the image in the registry.
  returned: success
  type: str
uploaded:
  description: The blobs sent (or that would be), by digest; empty when the registry had the image.
  returned: success
  type: list
  elements: str
'''
