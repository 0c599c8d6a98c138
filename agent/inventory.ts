import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AgentError } from './errors';

/** What the machine holds, sent at join: it becomes labels and accelerator/storage-root rows. */
export const InventorySchema = z.strictObject({
  accelerators: z.array(z.strictObject({ model: z.string().min(1), serial: z.string().min(1) })).default([]),
  storageRoots: z
    .array(z.strictObject({ path: z.string().startsWith('/'), bytes: z.number().int().min(0) }))
    .default([]),
});

export type Inventory = z.infer<typeof InventorySchema>;

export const EMPTY_INVENTORY: Inventory = { accelerators: [], storageRoots: [] };

/** The inventory in a JSON file (`--inventory FILE`); the API checks the details. */
export function readInventoryFile(file: string): Inventory {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new AgentError(`cannot read the inventory file ${file}: ${(error as Error).message}`);
  }
  const result = InventorySchema.safeParse(parsed);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new AgentError(`the inventory file ${file} is not valid: ${problems.join('; ')}`);
  }
  return result.data;
}
