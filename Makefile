# Entry points for developers and CI. Every target does its own set-up on a fresh Debian
# bookworm machine (as root) and costs next to nothing when that set-up is already done.
#
#   make demo        simulated fleet up, playbooks/site.yml against it, then a test control plane
#                    and playbooks/kubernetes.yml
#   make demo-down   stop the control plane and remove the simulated fleet
#   make test        deps venv checks scenarios, stopping at the first failure; checks is lint, sanity,
#                    unit, k8s-test and sandbox-test side by side, scenarios is molecule beside releases
#                    (sanity and unit on ansible-core 2.16-2.18) (each also a target of its own)
#   make build       the collection tarball in .cache/dist/
#   make ee-context  the execution environment's build context in .cache/ee/ (ansible-builder create)
#   make bench       sandbox fleets from bare to validated, again converged, against their floors and a
#                    naive script, with a scale curve: bench/results.json and .png (BENCH_NODES,
#                    BENCH_SCALE_POINTS, BENCH_INSTALL_SCALE, BENCH_ROUNDS, BENCH_LEVERS=1)
#   make bench-scale the scale lane (docs/fleet-scale.md): light fleets of 1 to 100 nodes, kwok kubelets;
#                    per-node controller CPU, memory, SSH connections: bench/scale-results.json and .png
#                    (BENCH_SCALE_LANE_POINTS=1,10,25,50,100, BENCH_SCALE_FORKS, BENCH_SCALE_LEVERS=1)
#   make slices      one job sliced four ways as AWX runs it: the execution environment image built here (cached by
#                    its inputs), ansible-runner worker in it per slice against a light fleet, the merged fleet report
#                    (docs/awx.md; SLICES_NODES, SLICES_INSTALL_SCALE); .cache/slices/results.json
#   make faults      the fault matrix (docs/faults.md): 32 injected faults, each must fail with a clear
#                    message, lose nothing and converge on a rerun; .cache/faults/results.json

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

PYTHON ?= python3.11
VENV := .venv
VENV_BIN := $(CURDIR)/$(VENV)/bin
COLLECTION_LINK := .cache/collections/ansible_collections/npu/ascend
SANITY_ROOT := .cache/sanity/ansible_collections/npu/ascend
# The venv whose ansible-test `make sanity` runs; `make releases` points it at an older release's.
SANITY_VENV_BIN := $(VENV_BIN)
DIST_DIR := .cache/dist
FLEET := $(VENV_BIN)/python sandbox/fleet.py

# What the host needs: podman (with runc, which sandbox/podman/containers.conf selects, and
# iptables, which netavark needs to give the nodes a route to the Debian mirror) runs the nodes,
# debootstrap builds their image, makeself builds the fake Huawei packages, containerd is the
# runtime the roles configure, git lists the files `make sanity` checks, ansible-test's
# shellcheck test needs shellcheck, the sandbox's probe image is a static busybox, and the test
# control plane makes its certificates with openssl, and Ansible reaches the nodes with ssh
# (openssh-client, whose ssh-keygen makes the sandbox's key). apt's
# recommended packages are kept: podman's (catatonit, slirp4netns, aardvark-dns) are part of a
# working set-up. qemu-user-static and binfmt-support run the aarch64 node of the host_stack_arm
# scenario; installing them registers qemu's formats in the host kernel's binfmt_misc (a change
# to the host, which that scenario's create step makes explicitly and idempotently anyway).
# chromium is the browser the unit tests open the HTML fleet report in (Playwright from
# requirements.txt drives it; no browser is downloaded).
DEBIAN_PACKAGES := podman runc iptables debootstrap makeself containerd git python3-venv ca-certificates shellcheck busybox-static openssl openssh-client qemu-user-static binfmt-support chromium

# Each sandbox node's systemd takes a dozen or more inotify instances; Debian's default of 128
# per user runs out at about ten nodes (molecule scenarios side by side, make bench's fleet), and
# systemd in the next node then fails with "Failed to create inotify object: Too many open files".
INOTIFY_INSTANCES := 1024

TEST_STAGES := deps venv checks scenarios
CHECK_STAGES := lint sanity unit k8s-test sandbox-test
SCENARIO_STAGES := molecule releases

export PATH := $(VENV_BIN):$(PATH)
export CONTAINERS_CONF := $(CURDIR)/sandbox/podman/containers.conf
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export PYTHONDONTWRITEBYTECODE := 1
# Only the checkout's link (make venv): a copy a user or a tool installed into ~/.ansible/collections,
# which ansible.cfg also names for users, would otherwise stand in for the checkout in ansible-lint.
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.cache/collections

ifneq ($(shell id -u),0)
SUDO := sudo
endif

.PHONY: help deps venv collection-link checks lint lint-installed ee-context sanity containerd-builds unit k8s-builds k8s-test sandbox-test releases molecule scenarios test build demo demo-down bench bench-scale bench-venv faults slices

help:
	@sed -n 's/^#   //p' $(firstword $(MAKEFILE_LIST))

deps:
	@missing=""; \
	for package in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' "$$package" 2>/dev/null | grep -q '^install ok installed$$' \
	    || missing="$$missing $$package"; \
	done; \
	if [ -z "$$missing" ]; then \
	  echo "deps: Debian packages already installed"; \
	else \
	  echo "deps: installing$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q$$missing; \
	fi
	@current=$$(cat /proc/sys/fs/inotify/max_user_instances); \
	if [ "$$current" -lt $(INOTIFY_INSTANCES) ]; then \
	  echo "deps: raising fs.inotify.max_user_instances from $$current to $(INOTIFY_INSTANCES)"; \
	  $(SUDO) sysctl -q -w fs.inotify.max_user_instances=$(INOTIFY_INSTANCES); \
	fi

# .venv is a link to the venv of requirements.txt in the machine's cache (~/.cache/npu-ascend/venvs),
# made once per content of that file: a fresh clone links it instead of installing it again, and a
# changed file is a new venv, so it never holds packages that are no longer pinned (tests/venv_cache.py).
# Its Python keeps the bytecode of Ansible's zipped modules: the tasks the scenarios run on the
# controller (kubernetes.core's above all) would compile it at every task
# (sandbox/bytecode-cache/ascend_sandbox_bytecode_cache.py).
venv: collection-link
	@$(PYTHON) tests/venv_cache.py requirements.txt $(VENV)

collection-link:
	@mkdir -p $(dir $(COLLECTION_LINK))
	@[ "$$(readlink $(COLLECTION_LINK) 2>/dev/null)" = "../../../.." ] || ln -sfn ../../../.. $(COLLECTION_LINK)

# antsibull-docs checks the docs of every plugin and role the way the Ansible docsite renders
# them (schema, markup, references to this collection's plugins and roles, rstcheck); references to
# other collections are not resolved because loading every installed collection's docs takes
# minutes. Then the execution environment's build context from the tarball `make build` writes.
# ansible-lint (offline) puts $ANSIBLE_HOME/collections (~/.ansible/collections by default) before
# the checkout: an npu.ascend installed there earlier would be linted against instead of this one.
lint: venv
	ANSIBLE_HOME=$(CURDIR)/.cache/ansible-lint ansible-lint
	antsibull-changelog lint
	antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs self --check-extra-docs-refs .
	$(MAKE) ee-context

# The plugin docs as a user gets them: the tarball `make build` wrote, installed alone (no
# dependencies) under .cache/lint-installed, linted with references to ansible.builtin checked too,
# which the lint of the checkout above leaves out. Only ansible-core and this collection are on that
# path, so it takes seconds where resolving every collection of the venv takes minutes.
LINT_INSTALLED := .cache/lint-installed
lint-installed: build
	rm -rf $(LINT_INSTALLED)
	ansible-galaxy collection install --no-deps --force --collections-path $(LINT_INSTALLED) \
	  $(DIST_DIR)/npu-ascend-$$(sed -n 's/^version: //p' galaxy.yml).tar.gz
	cd $(LINT_INSTALLED)/ansible_collections/npu/ascend && antsibull-docs lint-collection-docs --plugin-docs .

# The build context of the execution environment as docs/awx.md makes it: the definition copied from
# the installed collection (lint-installed's copy) beside the tarball, `ansible-builder create` there,
# the context checked for the tarball (ansible-builder only warns when it is missing).
EE_CONTEXT := .cache/ee
ee-context: lint-installed
	rm -rf $(EE_CONTEXT) && mkdir -p $(EE_CONTEXT)
	cp $(LINT_INSTALLED)/ansible_collections/npu/ascend/execution-environment.yml $(EE_CONTEXT)/
	cp $(DIST_DIR)/npu-ascend-$$(sed -n 's/^version: //p' galaxy.yml).tar.gz $(EE_CONTEXT)/
	cd $(EE_CONTEXT) && ansible-builder create --file execution-environment.yml --context context
	@test -f $(EE_CONTEXT)/context/_build/collections/npu-ascend-$$(sed -n 's/^version: //p' galaxy.yml).tar.gz \
	  || { echo "ee-context: the tarball of galaxy.yml's version is not in the context; update execution-environment.yml"; exit 1; }

# ansible-test only accepts a collection at .../ansible_collections/<namespace>/<name>, so it
# runs on a copy of the files git knows about (tracked, or new and not ignored). The copy gets a
# repository of its own because ansible-test lists files with git and the copy lies in an ignored
# directory of this one.
sanity: venv
	rm -rf $(SANITY_ROOT)
	mkdir -p $(SANITY_ROOT)
	git ls-files -z --cached --others --exclude-standard \
	  | while IFS= read -r -d '' path; do if [ -e "$$path" ]; then printf '%s\0' "$$path"; fi; done \
	  | tar --null --files-from=- --create --file=- \
	  | tar --directory=$(SANITY_ROOT) --extract --file=-
	git -C $(SANITY_ROOT) init --quiet
	$(SANITY_VENV_BIN)/python tests/sanity/provide_get_pip.py
	cd $(SANITY_ROOT) && $(SANITY_VENV_BIN)/ansible-test sanity --venv --python 3.11 --color no

# Debian ships containerd 1.6 only; the unit tests also check the configs we write against
# containerd 1.7 and 2.x, built once from the Go module proxy and cached under ~/.cache/npu-ascend.
containerd-builds:
	bash tests/containerd/build.sh

unit: venv containerd-builds
	pytest tests/unit

# The older ansible-core releases the collection claims (meta/runtime.yml): `make sanity` and the unit
# tests again with each one's ansible-test and ansible-playbook, from a venv per release under
# .cache/releases/<release>/venv made from tests/releases/requirements-<release>.txt (kept in the machine's
# cache as .venv is). 2.19, the release of requirements.txt, is `make sanity` and `make unit` themselves.
RELEASES := 2.16 2.17 2.18
releases: venv containerd-builds
	$(VENV_BIN)/python tests/releases/run.py $(RELEASES)

# The Kubernetes side is tested against a real control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler; kwok for the kubelets) and promtool, built once from
# the Go module proxy and cached under ~/.cache/npu-ascend/k8s (cold: about half an hour on two
# idle cores, 79 minutes measured under load; then about a second).
k8s-builds:
	bash tests/k8s/build.sh

k8s-test: venv k8s-builds
	pytest tests/k8s

# tests/sandbox/test_ascend_deployer.py runs Huawei's deployer on openEuler nodes (it refuses Debian 12).
sandbox-test: venv
	$(FLEET) image
	$(FLEET) image --os openeuler-22.03
	pytest tests/sandbox

# The checks read the tree and write only under .cache/, each in a directory of its own, and
# most keep one core busy at most; side by side they take the time of their CPU work. Each one's
# log is .cache/logs/stage-<target>.log; a failed one's is printed (tests/run_stages.py).
checks: venv
	$(VENV_BIN)/python tests/run_stages.py $(CHECK_STAGES)

# Scenarios run three at a time (MOLECULE_JOBS); each one's log is in .cache/molecule-logs/.
# host_stack_incompatible runs on ansible-core 2.16, from the venv `make releases` keeps.
molecule: venv
	$(VENV_BIN)/python tests/releases/run.py --venvs-only 2.16
	$(VENV_BIN)/python tests/molecule/run_scenarios.py

# The scenarios spend most of their time waiting (installers' simulated durations, reboots, systemd),
# while the older releases' sanity and unit tests keep one core busy for about ten minutes: beside the
# scenarios they cost CI next to no time, after the checks they would add their whole duration.
scenarios: venv
	$(VENV_BIN)/python tests/run_stages.py --label scenarios $(SCENARIO_STAGES)

# Each stage runs as its own make so the banner can show how long it took. Once deps and venv
# are there, what later stages build runs in the background, since lint and sanity leave a core
# idle most of the time: the Go builds (containerd for unit; the control plane, kubelet and
# Prometheus for k8s-test and molecule) and the node images (molecule's x86_64, openEuler and
# aarch64 nodes; the aarch64 debootstrap runs under emulation, the longest cold build, so qemu's
# binfmt entry is registered here already, as host_stack_arm's create step does anyway). The build
# scripts and fleet.py hold locks, so a stage's own call waits for the background one and then
# finds the result cached, and a failed background build fails again, visibly, in its stage.
# The background output is in .cache/logs/prebuild-*.log.
PREBUILD_AFTER := venv
PREBUILD_LOGS := .cache/logs
test:
	@timings=""; prebuild=""; \
	trap '[ -z "$$prebuild" ] || kill -- -$$prebuild 2>/dev/null || true' EXIT; \
	for stage in $(TEST_STAGES); do \
	  printf '\n======== make %s ========\n' "$$stage"; \
	  started=$$(date +%s); \
	  if $(MAKE) "$$stage"; then \
	    elapsed=$$(( $$(date +%s) - started )); \
	    printf '======== make %s passed in %ss ========\n' "$$stage" "$$elapsed"; \
	    timings="$$timings$$(printf '%-14s %5ss' "$$stage" "$$elapsed")\n"; \
	  else \
	    elapsed=$$(( $$(date +%s) - started )); \
	    printf '======== make %s FAILED after %ss ========\n' "$$stage" "$$elapsed"; \
	    exit 1; \
	  fi; \
	  if [ "$$stage" = $(PREBUILD_AFTER) ]; then \
	    mkdir -p $(PREBUILD_LOGS); \
	    setsid bash -c '$(MAKE) containerd-builds k8s-builds > $(PREBUILD_LOGS)/prebuild-go.log 2>&1 & \
	      { $(FLEET) image && $(FLEET) image --os openeuler-22.03 && $(FLEET) enable-foreign-arch \
	        && $(FLEET) image --arch aarch64; } \
	        > $(PREBUILD_LOGS)/prebuild-images.log 2>&1 & wait' & prebuild=$$!; \
	    echo "test: Go builds and node images started in the background (logs: $(PREBUILD_LOGS)/prebuild-*.log)"; \
	  fi; \
	done; \
	printf '\n======== stage timings ========\n%b' "$$timings"

# The tarball holds the collection only (galaxy.yml's build_ignore; tests/unit/tools/test_build.py).
build: venv
	mkdir -p $(DIST_DIR)
	ansible-galaxy collection build --force --output-path $(DIST_DIR) .
	@tarball=$(DIST_DIR)/npu-ascend-$$(sed -n 's/^version: //p' galaxy.yml).tar.gz; \
	  echo "build: $$tarball, $$(tar -tzf "$$tarball" | wc -l) entries, $$(du -k "$$tarball" | cut -f1) KiB"

demo: deps venv
	$(FLEET) image
	$(FLEET) packages
	$(FLEET) up
	$(FLEET) probe-image
	ansible-playbook -i inventories/sandbox playbooks/site.yml
	bash tests/k8s/build.sh
	$(VENV_BIN)/python tests/k8s/controlplane.py up --state-dir .cache/k8s-demo --nodes-from-inventory inventories/sandbox --device-plugin-standin
	ansible-playbook -i inventories/sandbox playbooks/kubernetes.yml

demo-down: venv
	$(VENV_BIN)/python tests/k8s/controlplane.py down --state-dir .cache/k8s-demo
	$(FLEET) down

# The benchmark (docs/benchmarks.md). Its chart's matplotlib lives in a venv of its own,
# .cache/bench/venv from bench/requirements.txt, rebuilt when that file changes; with
# BENCH_LEVERS=1, Mitogen (bench/requirements-mitogen.txt) goes into .cache/bench/mitogen for
# the lever study only. bench/run.py builds the image and packages, makes and removes its nodes
# and control plane; a missed target does not fail it, a failed provisioning does.
BENCH_VENV := .cache/bench/venv
bench-venv:
	@wanted=$$(sha256sum bench/requirements.txt | cut -d' ' -f1); \
	if [ "$$(cat $(BENCH_VENV)/.requirements.sha256 2>/dev/null)" != "$$wanted" ]; then \
	  echo "bench: creating $(BENCH_VENV) from bench/requirements.txt"; \
	  rm -rf $(BENCH_VENV); \
	  $(PYTHON) -m venv $(BENCH_VENV); \
	  $(BENCH_VENV)/bin/pip install --quiet --requirement bench/requirements.txt; \
	  echo "$$wanted" > $(BENCH_VENV)/.requirements.sha256; \
	fi

bench: deps venv k8s-builds bench-venv
	@if [ "$${BENCH_LEVERS:-}" = 1 ] && [ ! -d .cache/bench/mitogen/ansible_mitogen ]; then \
	  $(VENV_BIN)/pip install --quiet --no-deps --target .cache/bench/mitogen --requirement bench/requirements-mitogen.txt; \
	fi
	$(FLEET) image
	$(VENV_BIN)/python bench/run.py

# The scale lane (docs/benchmarks.md, "Scale lane"; docs/fleet-scale.md): bench/scale.py brings up
# light scl-NNN nodes for each fleet size of BENCH_SCALE_LANE_POINTS and a control plane with one
# kwok Node per host, measures preflight, site, kubernetes, report and the no-op floor, and removes
# them. It holds /tmp/npu-lock-bench, the lock `make bench` users share on one machine.
BENCH_SCALE_LANE_POINTS ?= 1,10,25,50,100
bench-scale: deps venv k8s-builds bench-venv
	$(FLEET) image
	BENCH_SCALE_LANE_POINTS=$(BENCH_SCALE_LANE_POINTS) flock /tmp/npu-lock-bench $(VENV_BIN)/python bench/scale.py

# The fault matrix (docs/faults.md): tests/faults/matrix.py makes fresh flt-* nodes, builds its
# packages and damaged copies, runs every row (three lanes side by side), prints the table, keeps
# .cache/faults/results.json and the logs, and removes its nodes and control plane. The
# Kubernetes rows need the control plane from tests/k8s/build.sh.
faults: deps venv k8s-builds
	$(FLEET) image
	$(VENV_BIN)/python tests/faults/matrix.py

# Job slicing as AWX runs it (docs/awx.md, "Job slicing, run here"): tests/slices/ee_image.py builds the
# execution environment from the definition and tarball of `make ee-context` on a base debootstrapped
# here (image tagged by the hash of its inputs: a second run builds nothing), then tests/slices/run.py
# brings up light slc-* nodes and runs four slices of npu.ascend.site side by side, each `ansible-runner
# worker` in the image, and the merge of their report parts; it removes its nodes. Not in `make test`:
# docs/awx.md has its measured durations.
slices: deps venv ee-context
	flock /tmp/npu-lock-slices $(VENV_BIN)/python tests/slices/run.py
