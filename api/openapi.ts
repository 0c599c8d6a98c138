import type { OpenAPIHono } from '@hono/zod-openapi';
import { ERROR_STATUS, type ErrorCode } from '../domain/errors';
import type { AppEnv } from './env';
import EXAMPLES from './openapi-examples.json' with { type: 'json' };
import { ERROR_RESPONSES, ErrorSchema } from './schemas';

/** The areas the operations are grouped in; every route names exactly one (`tags: ['nodes']`). */
const TAGS = [
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
  {
    name: 'maintenance',
    description:
      'A maintenance plan on a node (drain, run, reboot, verify, uncordon) and the verified reboot (a workflow).',
  },
  {
    name: 'commands',
    description:
      "Run an action configured on a node's agent (diagnostics, logs, a driver upgrade) and read its output.",
  },
  {
    name: 'ssh',
    description:
      'Break-glass SSH: short-lived OpenSSH certificates for root on one node, and their revocation.',
  },
  { name: 'operations', description: 'The records of workflow-backed calls: read, list, cancel.' },
  { name: 'allocations', description: 'Tenant workloads placed on nodes; what a drain waits for.' },
  {
    name: 'artifacts',
    description:
      'Where copies of artifacts live, as the storage layer records them; a sole copy blocks a decommission.',
  },
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
const SERVERS = [{ url: '/', description: 'the Drydock API that serves this document' }];

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

/**
 * The examples of the document: the bodies test/openapi-examples.test.ts sent and got back from
 * the real API (ids and times normalised), by operationId and status, and error envelopes by code.
 */
export interface OpenApiExamples {
  operations: Record<string, { request?: unknown; responses: Record<string, unknown> }>;
  errors: Partial<Record<ErrorCode, unknown>>;
}

export const OPENAPI_EXAMPLES: OpenApiExamples = EXAMPLES;

type Document = ReturnType<OpenAPIHono<AppEnv>['getOpenAPI31Document']>;
interface MediaType {
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Operation {
  operationId?: string;
  parameters?: { in?: string; example?: unknown; schema?: { example?: unknown } }[];
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, { content?: Record<string, MediaType> }>;
}

/** The document the API serves at `/openapi.json`: its routes' schemas, with the recorded examples. */
export function openApiDocumentOf(app: OpenAPIHono<AppEnv>): Document {
  const document = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'Drydock API',
      version: '0.1.0',
      description: 'Take GPU servers in and out of service safely.',
    },
    servers: SERVERS,
    tags: [...TAGS],
    security: [{ bearer: [] }],
  });
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item as Record<string, Operation>)) {
      // A query parameter is a filter or a page: the reference's "Test Request" fills each with its
      // example, and a first try filtered by an example id or selector answers nothing. Their
      // descriptions say the form instead.
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'query') continue;
        delete parameter.example;
        delete parameter.schema?.example;
      }
      const examples = OPENAPI_EXAMPLES.operations[operation.operationId ?? ''];
      if (!examples) continue;
      const request = operation.requestBody?.content?.['application/json'];
      if (request && examples.request !== undefined) request.example = examples.request;
      for (const [status, body] of Object.entries(examples.responses)) {
        const media = operation.responses?.[status]?.content?.['application/json'];
        if (media) media.example = body;
      }
    }
  }
  for (const [code, envelope] of Object.entries(OPENAPI_EXAMPLES.errors)) {
    const { name } = ERROR_RESPONSES[ERROR_STATUS[code as ErrorCode] as keyof typeof ERROR_RESPONSES];
    const media = (document.components?.responses?.[name] as { content: Record<string, MediaType> }).content[
      'application/json'
    ]!;
    media.examples = { ...media.examples, [code]: { value: envelope } };
  }
  return document;
}
