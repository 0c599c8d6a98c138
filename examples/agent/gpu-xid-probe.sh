#!/bin/sh
# Health probe for drydock-agent (examples/agent/agent.yaml): exits 0 when every GPU answers and
# none has logged an Xid error since boot (or since the last GPU reset); otherwise prints one line
# saying why (the condition's reason, e.g. "xid-79") and exits 1. An example for NVIDIA GPUs: not
# run by the tests, which need no GPU.
#
# Usage: gpu-xid-probe.sh [EXPECTED_GPUS]  (fewer GPUs answering than EXPECTED_GPUS is a fault)
# The agent passes its probes no environment but PATH, HOME and DRYDOCK_*: settings go in argv.
set -u

if ! out=$(nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader 2>&1); then
  echo "nvidia-smi failed: $(printf '%s' "$out" | head -n 1)"
  exit 1
fi

count=$(printf '%s\n' "$out" | grep -c .)
expected=${1:-}
if [ -n "$expected" ] && [ "$count" -lt "$expected" ]; then
  echo "gpu-missing: $count of $expected GPUs answer"
  exit 1
fi

# The kernel log names Xid errors as "NVRM: Xid (PCI:0000:3b:00): 79, ...". It keeps them until the
# next boot, so those a GPU reset dealt with are not counted again: reset-accelerator.sh writes how
# many there were after its reset to this file (on /run, which a reboot empties with the log).
cleared_file=/run/drydock/xid-cleared
xids=$(dmesg 2>/dev/null | grep -o 'NVRM: Xid ([^)]*): [0-9]*')
total=$(printf '%s' "$xids" | grep -c .)
cleared=$(cat "$cleared_file" 2>/dev/null || echo 0)
if [ "$total" -gt "$cleared" ]; then
  echo "xid-$(printf '%s\n' "$xids" | tail -n 1 | sed 's/.*: //')"
  exit 1
fi
exit 0
