import { z } from '@hono/zod-openapi';
import { text } from './schemas';

// What a machine holds, as its agent reports it: in the join body, and on `PUT /v1/agent/inventory`
// (docs/agent/gpu-machine.md#discovery). One definition for both.

const storagePath = text({ max: 1024, description: 'an absolute path' }).refine(
  (path) => path.startsWith('/'),
  'must be an absolute path, starting with /',
);

const bytes = (description: string) =>
  z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).openapi({ description });

export const inventorySchema = z
  .strictObject({
    accelerators: z
      .array(
        z.strictObject({
          model: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'a model of letters, digits, . _ and -'),
          serial: text({ max: 128, description: "the accelerator's serial number" }),
          memoryBytes: bytes("the accelerator's memory").optional(),
        }),
      )
      .max(64),
    storageRoots: z.array(z.strictObject({ path: storagePath, bytes: bytes('its size') })).max(64),
    cpu: z
      .strictObject({
        count: z.number().int().min(1).max(65_536).openapi({ description: 'logical CPUs' }),
        model: text({ max: 128, description: 'the CPU model name' }).optional(),
      })
      .optional(),
    memoryBytes: bytes('memory (MemTotal)').optional(),
  })
  // Inline, not a named component: the request-body tests read a body's schema without following $ref.
  .openapi({
    description:
      'what the machine holds: accelerators, storage roots, CPUs and memory; it sets the inventory labels gpu.model, gpu.count, cpu.count and memory.gib',
  });
