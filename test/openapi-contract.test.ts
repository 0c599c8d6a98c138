import { readFileSync } from 'node:fs';
import type { RouteConfig } from '@hono/zod-openapi';
import { beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { OpenAPI3, OperationObject, ReferenceObject, ResponseObject } from 'openapi-typescript';
import { OPENAPI_EXAMPLES } from '../api/openapi';
import { ERROR_RESPONSES, ErrorSchema } from '../api/schemas';
import { ERROR_STATUS } from '../domain/errors';
import { openApiDocument, serviceFreeApp } from '../scripts/openapi-document';

/** What a generated client and a reader of `/openapi.json` rely on beyond the routes themselves. */

let doc: OpenAPI3;
let operations: { key: string; operation: OperationObject }[];

beforeAll(async () => {
  doc = await openApiDocument();
  operations = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, OperationObject>).map(([method, operation]) => ({
      key: `${method.toUpperCase()} ${path}`,
      operation,
    })),
  );
});

describe('the OpenAPI document', () => {
  it('names every operation with a unique camelCase operationId', () => {
    expect(operations.length).toBeGreaterThan(40);
    const unnamed = operations.filter((o) => o.operation.operationId === undefined).map((o) => o.key);
    expect(unnamed).toEqual([]);
    const ids = operations.map((o) => o.operation.operationId!);
    expect(ids.filter((id) => !/^[a-z][a-zA-Z]*$/.test(id))).toEqual([]);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it('lists every operationId in docs/api.md', () => {
    const guide = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');
    const missing = operations
      .map((o) => o.operation.operationId!)
      .filter((id) => !guide.includes(`\`${id}\``));
    expect(missing).toEqual([]);
  });

  it('keeps the names an operator guesses for the main operations', () => {
    const idOf = (key: string) => operations.find((o) => o.key === key)?.operation.operationId;
    expect(idOf('GET /v1/nodes')).toBe('listNodes');
    expect(idOf('GET /v1/nodes/{id}')).toBe('getNode');
    expect(idOf('POST /v1/nodes/{id}/cordon')).toBe('cordonNode');
    expect(idOf('POST /v1/nodes/{id}/drain')).toBe('drainNode');
    expect(idOf('POST /v1/nodes/{id}/decommission/preview')).toBe('previewDecommission');
    expect(idOf('POST /v1/nodes/{id}/decommission')).toBe('executeDecommission');
    expect(idOf('POST /v1/nodes/{id}/purge')).toBe('purgeNode');
    expect(idOf('GET /v1/operations/{id}')).toBe('getOperation');
  });

  it('gives every operation exactly one tag, each described at the top and each used', () => {
    const listed = (doc.tags ?? []).map((t) => t.name);
    expect((doc.tags ?? []).filter((t) => !t.description).map((t) => t.name)).toEqual([]);
    const wrong = operations
      .filter((o) => o.operation.tags?.length !== 1 || !listed.includes(o.operation.tags[0]!))
      .map((o) => `${o.key}: ${JSON.stringify(o.operation.tags)}`);
    expect(wrong).toEqual([]);
    const used = new Set(operations.map((o) => o.operation.tags![0]));
    expect(listed.filter((name) => !used.has(name))).toEqual([]);
  });

  it('has one relative server: the API that served it', () => {
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
  });

  it('describes the error envelope once, and every error response refers to it', () => {
    const envelope = doc.components?.schemas?.Error as unknown as {
      properties: { error: { properties: object } };
    };
    expect(Object.keys(envelope.properties.error.properties)).toEqual([
      'code',
      'message',
      'details',
      'requestId',
    ]);
    expect(envelope.properties.error.properties).toMatchObject({
      code: { enum: Object.keys(ERROR_STATUS) },
    });
    const shared = doc.components?.responses ?? {};
    for (const response of Object.values(shared) as ResponseObject[]) {
      expect(response.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    const inline: string[] = [];
    for (const { key, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (Number(status) < 400) continue;
        const ref = (response as ReferenceObject).$ref;
        if (!ref?.startsWith('#/components/responses/') || !(ref.split('/').pop()! in shared)) {
          inline.push(`${key} ${status}`);
        }
      }
    }
    expect(inline).toEqual([]);
  });

  it('carries the recorded examples, each one valid for the schema of its body', () => {
    const routes = new Map<string, RouteConfig>();
    for (const definition of serviceFreeApp().openAPIRegistry.definitions) {
      if (definition.type === 'route' && definition.route.operationId) {
        routes.set(definition.route.operationId, definition.route);
      }
    }
    type Media = { schema?: z.ZodType; example?: unknown };
    const json = (content: unknown) => (content as Record<string, Media> | undefined)?.['application/json'];
    const invalid: string[] = [];
    const check = (where: string, schema: z.ZodType | undefined, example: unknown) => {
      const result = schema?.safeParse(example);
      if (!result?.success) invalid.push(`${where}: ${result?.error.message ?? 'no schema'}`);
    };
    for (const [operationId, examples] of Object.entries(OPENAPI_EXAMPLES.operations)) {
      const route = routes.get(operationId);
      const served = operations.find((o) => o.operation.operationId === operationId)?.operation;
      if (!route || !served) {
        invalid.push(`${operationId}: no such operation`);
        continue;
      }
      if (examples.request !== undefined) {
        check(`${operationId} request`, json(route.request?.body?.content)?.schema, examples.request);
        const body = served.requestBody as { content: Record<string, Media> };
        expect(json(body.content)?.example).toEqual(examples.request);
      }
      for (const [status, example] of Object.entries(examples.responses)) {
        const response = route.responses[status] as { content?: unknown } | undefined;
        check(`${operationId} ${status}`, json(response?.content)?.schema, example);
        const answer = served.responses?.[status] as { content: Record<string, Media> };
        expect(json(answer.content)?.example).toEqual(example);
      }
    }
    expect(invalid).toEqual([]);
    for (const operationId of ['listNodes', 'getNode', 'cordonNode', 'drainNode', 'previewDecommission']) {
      expect(OPENAPI_EXAMPLES.operations[operationId]?.responses, operationId).toBeDefined();
    }
    for (const operationId of ['executeDecommission', 'purgeNode', 'remediateNode', 'getOperation']) {
      expect(OPENAPI_EXAMPLES.operations[operationId]?.responses, operationId).toBeDefined();
    }
    const shared = doc.components?.responses as Record<
      string,
      { content: Record<string, { examples?: object }> }
    >;
    for (const [code, envelope] of Object.entries(OPENAPI_EXAMPLES.errors)) {
      check(code, ErrorSchema, envelope);
      const { name } =
        ERROR_RESPONSES[ERROR_STATUS[code as keyof typeof ERROR_STATUS] as keyof typeof ERROR_RESPONSES];
      expect(shared[name]!.content['application/json']!.examples).toMatchObject({
        [code]: { value: envelope },
      });
    }
    expect(Object.keys(OPENAPI_EXAMPLES.errors).sort()).toEqual(['CONFLICT', 'INVALID_INPUT', 'NOT_FOUND']);
  });
});
