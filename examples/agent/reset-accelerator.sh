#!/bin/sh
# The reset-accelerator action for drydock-agent (examples/agent/agent.yaml): resets the GPUs
# with nvidia-smi. Exits non-zero with the reason on stderr when a reset is not possible (a
# process still holds a GPU, say); the agent refuses the command with that text and the
# remediation moves to its next rung. An example for NVIDIA GPUs: not run by the tests.
#
# The agent sets DRYDOCK_NODE_ID, DRYDOCK_COMMAND_ID, DRYDOCK_ACTION and DRYDOCK_CONDITION.
set -eu

echo "drydock: ${DRYDOCK_ACTION:-reset-accelerator} for ${DRYDOCK_CONDITION:-?} (command ${DRYDOCK_COMMAND_ID:-?})" >&2

# Compute processes keep a GPU from resetting: say which, and refuse.
busy=$(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader 2>/dev/null || true)
if [ -n "$busy" ]; then
  echo "GPUs busy, not reset: $(printf '%s' "$busy" | tr '\n' ';')" >&2
  exit 3
fi

nvidia-smi -r
# The GPUs must answer again; then the Xid errors logged so far are dealt with (gpu-xid-probe.sh
# counts only newer ones).
nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader >/dev/null
cleared_file=/run/drydock/xid-cleared
mkdir -p "$(dirname "$cleared_file")"
dmesg | grep -c 'NVRM: Xid (' > "$cleared_file" || true
