#!/bin/sh
# Prints this machine's inventory as the JSON drydock-agent reports (docs/agent/gpu-machine.md#discovery):
#   { "accelerators": [{ "model", "serial", "memoryBytes" }], "storageRoots": [{ "path", "bytes" }],
#     "cpu": { "count", "model" }, "memoryBytes" }
# GPUs from nvidia-smi (none when it is missing), CPUs from lscpu, memory from /proc/meminfo, and
# the storage roots named as arguments (e.g. /data /scratch) from df. Needs jq.
set -eu

gpus='[]'
if command -v nvidia-smi >/dev/null 2>&1; then
  # "NVIDIA H100 80GB HBM3, 1654922000123, 81559 MiB" → model with spaces as -, memory in bytes.
  gpus=$(nvidia-smi --query-gpu=name,serial,memory.total --format=csv,noheader,nounits |
    jq -R -s '[split("\n")[] | select(length > 0) | split(", ") |
      { model: (.[0] | gsub("[^A-Za-z0-9._-]+"; "-")), serial: .[1], memoryBytes: ((.[2] | tonumber) * 1048576) }]')
fi

cpus=$(lscpu -J | jq '[.lscpu[] | { (.field | rtrimstr(":")): .data }] | add |
  { count: (."CPU(s)" | tonumber), model: ."Model name" }')

memory=$(awk '/^MemTotal:/ { printf "%d", $2 * 1024 }' /proc/meminfo)

roots='[]'
for root in "$@"; do
  bytes=$(df -B1 --output=size "$root" | tail -n 1 | tr -d ' ')
  roots=$(printf '%s' "$roots" | jq --arg p "$root" --argjson b "$bytes" '. + [{ path: $p, bytes: $b }]')
done

jq -n --argjson a "$gpus" --argjson s "$roots" --argjson c "$cpus" --argjson m "$memory" \
  '{ accelerators: $a, storageRoots: $s, cpu: $c, memoryBytes: $m }'
