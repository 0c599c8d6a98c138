import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AgentError } from './errors';

/** What the machine holds, sent at join: it becomes labels and accelerator/storage-root rows. */
export const InventorySchema = z.strictObject({
  accelerators: z
    .array(
      z.strictObject({
        model: z.string().min(1),
        serial: z.string().min(1),
        memoryBytes: z.number().int().min(0).optional(),
      }),
    )
    .default([]),
  storageRoots: z
    .array(z.strictObject({ path: z.string().startsWith('/'), bytes: z.number().int().min(0) }))
    .default([]),
  cpu: z.strictObject({ count: z.number().int().min(1), model: z.string().min(1).optional() }).optional(),
  memoryBytes: z.number().int().min(0).optional(),
});

export type Inventory = z.infer<typeof InventorySchema>;

export const EMPTY_INVENTORY: Inventory = { accelerators: [], storageRoots: [] };

/** The inventory in a JSON file (`--inventory FILE`); the API checks the details. */
export function readInventoryFile(file: string): Inventory {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new AgentError(`cannot read the inventory file ${file}: ${(error as Error).message}`);
  }
  return parseInventory(text, `the inventory file ${file}`);
}

/** An inventory in JSON (a file, or a discovery command's output); `what` names it in errors. */
export function parseInventory(text: string, what: string): Inventory {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new AgentError(`cannot read ${what}: ${(error as Error).message}`);
  }
  const result = InventorySchema.safeParse(parsed);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new AgentError(`${what} is not valid: ${problems.join('; ')}`);
  }
  return result.data;
}
