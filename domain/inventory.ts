/**
 * What a machine holds, as its agent reports it (at join, and from its discovery command:
 * docs/agent/gpu-machine.md#discovery), and the `inventory` labels that follow from it.
 */
export interface Inventory {
  accelerators: { model: string; serial: string; memoryBytes?: number }[];
  storageRoots: { path: string; bytes: number }[];
  /** The CPUs: logical CPUs (`lscpu`'s `CPU(s)`), and the model name. */
  cpu?: { count: number; model?: string };
  /** Memory, in bytes (`/proc/meminfo`'s MemTotal). */
  memoryBytes?: number;
}

export const EMPTY_INVENTORY: Inventory = { accelerators: [], storageRoots: [] };

/** The keys inventory owns: operators may not set them, and a report sets or removes each. */
export const INVENTORY_LABEL_KEYS = ['gpu.model', 'gpu.count', 'cpu.count', 'memory.gib'] as const;

const GIB = 1024 ** 3;

/**
 * The `inventory` labels of an inventory: `gpu.model` (the models, `.`-joined, in order of first
 * appearance) and `gpu.count` when it has accelerators, `cpu.count` and `memory.gib` (whole GiB,
 * rounded down) when it says them. A key it does not say has no label.
 */
export function inventoryLabels(inventory: Inventory): Record<string, string> {
  const labels: Record<string, string> = {};
  if (inventory.accelerators.length > 0) {
    labels['gpu.model'] = [...new Set(inventory.accelerators.map((a) => a.model))].join('.');
    labels['gpu.count'] = String(inventory.accelerators.length);
  }
  if (inventory.cpu) labels['cpu.count'] = String(inventory.cpu.count);
  if (inventory.memoryBytes !== undefined)
    labels['memory.gib'] = String(Math.floor(inventory.memoryBytes / GIB));
  return labels;
}
