#!/bin/sh
# The driver-upgrade action for drydock-agent (examples/agent/agent.yaml): installs NVIDIA driver
# branch $1 (550, 570-server, …) with the distribution's package manager. Run on a drained node,
# then reboot it (the new kernel module loads at boot) and verify. What it prints comes back as
# the command's output (`drydock nodes run NODE driver-upgrade --arg version=570 --wait`). An
# example for Debian and Ubuntu with NVIDIA's packages: not run by the tests.
#
# The agent sets DRYDOCK_NODE_ID, DRYDOCK_COMMAND_ID and DRYDOCK_ACTION; the version is checked
# against the action's pattern before this runs.
set -eu

version="$1"
# No GPU process may run: the node is drained first (a rolling maintenance's drain step).
busy=$(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader 2>/dev/null || true)
if [ -n "$busy" ]; then
  echo "GPUs busy, not upgraded: $(printf '%s' "$busy" | tr '\n' ';')" >&2
  exit 3
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "nvidia-driver-${version}"
echo "installed nvidia-driver-${version}; it is active after a reboot"
dpkg-query -W -f='${Package} ${Version}\n' "nvidia-driver-${version}"
