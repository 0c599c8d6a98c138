import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { requireAgent } from '../auth';
import type { AppEnv } from '../env';
import { inventorySchema } from '../inventory-schema';
import { errorResponses, json, jsonBody } from '../schemas';
import { reportInventory } from '../services/inventory';

const inventoryRoute = createRoute({
  method: 'put',
  path: '/v1/agent/inventory',
  operationId: 'reportAgentInventory',
  tags: ['agent'],
  summary:
    "The machine's inventory as the agent's discovery found it; another than the last sets its rows and inventory labels (node.inventory.changed)",
  request: jsonBody(inventorySchema, true),
  responses: {
    200: json(
      z.object({
        nodeId: z.string(),
        changed: z.boolean().openapi({ description: 'another inventory than the one recorded' }),
        labels: z
          .object({ set: z.record(z.string(), z.string()), removed: z.array(z.string()) })
          .openapi({ description: 'the inventory labels it set and removed' }),
      }),
      'recorded',
    ),
    ...errorResponses,
  },
});

/** The agent's discovered inventory (docs/agent/gpu-machine.md#discovery). */
export function agentInventoryRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();
  router.openapi(inventoryRoute, async (c) => {
    // A pending node may say it too: what it holds is what an operator approves it for.
    const node = requireAgent(c.get('principal'), c.get('agentNode'), { beforeAdmission: true });
    const { changed, labels } = await reportInventory(c.get('deps'), node, c.req.valid('json'));
    return c.json({ nodeId: node.id, changed, labels }, 200);
  });
  return router;
}
