import { beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPI3, OperationObject, ReferenceObject, ResponseObject } from 'openapi-typescript';
import { ERROR_STATUS } from '../domain/errors';
import { openApiDocument } from '../scripts/openapi-document';

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
    const envelope = doc.components?.schemas?.Error as { properties: { error: { properties: object } } };
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
});
