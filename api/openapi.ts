import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './env';
import { ERROR_RESPONSES, ErrorSchema } from './schemas';

/** The areas the operations are grouped in; every route names exactly one (`tags: ['nodes']`). */
export const TAGS = [
  { name: 'nodes', description: 'Read nodes, and the controls that move one axis of a node at once.' },
  {
    name: 'access',
    description: 'Whether a node may take part at all: block, unblock, revoke its identity.',
  },
  { name: 'enrollment', description: 'How a machine becomes a node: join, approve or reject, adopt again.' },
  { name: 'agent', description: 'What the node agent calls with its node credential once joined.' },
  {
    name: 'drain',
    description: 'Empty a node, or the matching nodes of a pool a few at a time (workflows).',
  },
  { name: 'decommission', description: 'Preview, then retire a node for good (operator; a workflow).' },
  { name: 'purge', description: 'Make a node wipe itself from its machine (operator; a workflow).' },
  { name: 'remediation', description: 'Remediate a fault condition of a node (a workflow).' },
  { name: 'operations', description: 'The records of workflow-backed calls: read, list, cancel.' },
  { name: 'allocations', description: 'Tenant workloads placed on nodes; what a drain waits for.' },
  {
    name: 'pools',
    description: 'Groups of nodes with their policy, capacity buckets and disruption budget.',
  },
  { name: 'events', description: 'The audit log: one node’s events, and the fleet-wide feed.' },
  { name: 'keys', description: 'API keys (operator), and who the calling key is.' },
  { name: 'tokens', description: 'Join tokens a machine presents to be adopted at once.' },
] as const;

export type Tag = (typeof TAGS)[number]['name'];

/**
 * The document's one server, relative: the API is wherever this document was fetched from (a
 * relative URL resolves against the document's own URL), so it holds behind any host or proxy.
 * The paths carry `/v1` themselves.
 */
export const SERVERS = [{ url: '/', description: 'the Drydock API that serves this document' }];

/** Registers what the routes refer to: the error envelope and the error responses that carry it. */
export function registerSharedComponents(app: OpenAPIHono<AppEnv>): void {
  const registry = app.openAPIRegistry;
  registry.register('Error', ErrorSchema);
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  for (const { name, description } of Object.values(ERROR_RESPONSES)) {
    registry.registerComponent('responses', name, {
      description,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    });
  }
}
