#!/bin/sh
# Health probe for drydock-agent (examples/agent/agent.yaml): exits 0 when every GPU the driver
# expects answers and none has logged an Xid error since boot; otherwise prints one line saying
# why (the condition's reason, e.g. "xid-79") and exits 1. An example for NVIDIA GPUs: not run by
# the tests, which need no GPU.
#
# DRYDOCK_EXPECTED_GPUS (optional): how many GPUs the machine has; fewer answering is a fault.
set -u

if ! out=$(nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader 2>&1); then
  echo "nvidia-smi failed: $(printf '%s' "$out" | head -n 1)"
  exit 1
fi

count=$(printf '%s\n' "$out" | grep -c .)
if [ -n "${DRYDOCK_EXPECTED_GPUS:-}" ] && [ "$count" -lt "$DRYDOCK_EXPECTED_GPUS" ]; then
  echo "gpu-missing: $count of $DRYDOCK_EXPECTED_GPUS GPUs answer"
  exit 1
fi

# The kernel log names Xid errors as "NVRM: Xid (PCI:0000:3b:00): 79, ...".
xid=$(dmesg 2>/dev/null | grep -o 'NVRM: Xid ([^)]*): [0-9]*' | tail -n 1 | sed 's/.*: //')
if [ -n "$xid" ]; then
  echo "xid-$xid"
  exit 1
fi
exit 0
