import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { idPattern } from '../../domain/ids';
import { artifactCopyView, listArtifactCopies, listNodeCopies } from '../../db/queries/artifacts';
import { getVisibleNode } from '../../db/queries/nodes';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { decodeCursor, page } from '../pagination';
import {
  artifactId,
  ArtifactCopySchema,
  artifactPath,
  cursor,
  errorResponses,
  json,
  jsonBody,
  limit,
  nodeIdParams,
  reason,
} from '../schemas';
import { recordArtifactCopy, removeArtifactCopy } from '../services/artifacts';

const copyParams = nodeIdParams.extend({
  artifactId: artifactId.openapi({ param: { name: 'artifactId', in: 'path' } }),
});

const recordRoute = createRoute({
  method: 'put',
  path: '/v1/nodes/{id}/artifact-copies/{artifactId}',
  operationId: 'recordArtifactCopy',
  tags: ['artifacts'],
  summary: "Record the node's copy of an artifact at a path (idempotent; a sole copy blocks a decommission)",
  request: {
    params: copyParams,
    ...jsonBody(z.strictObject({ path: artifactPath, reason: reason.optional() }), true),
  },
  responses: {
    201: json(ArtifactCopySchema, 'recorded now (new, or moved from the path recorded before)'),
    200: json(ArtifactCopySchema, 'already recorded at this path: nothing changed'),
    ...errorResponses,
  },
});

const removeRoute = createRoute({
  method: 'delete',
  path: '/v1/nodes/{id}/artifact-copies/{artifactId}',
  operationId: 'removeArtifactCopy',
  tags: ['artifacts'],
  summary: "Remove the node's copy of an artifact (idempotent: a removed one answers as it is)",
  request: { params: copyParams, ...jsonBody(z.strictObject({ reason: reason.optional() })) },
  responses: {
    200: json(ArtifactCopySchema, 'the copy, removed (now, or before)'),
    ...errorResponses,
  },
});

const pageQuery = z.strictObject({ limit: limit(100, 100), cursor: cursor.optional() });
const CopyPageSchema = z.object({ items: z.array(ArtifactCopySchema), nextCursor: z.string().nullable() });

const nodeCopiesRoute = createRoute({
  method: 'get',
  path: '/v1/nodes/{id}/artifact-copies',
  operationId: 'listNodeArtifactCopies',
  tags: ['artifacts'],
  summary: 'List the live artifact copies recorded on a node, by artifact id',
  request: { params: nodeIdParams, query: pageQuery },
  responses: { 200: json(CopyPageSchema, 'a page of copies'), ...errorResponses },
});

const artifactCopiesRoute = createRoute({
  method: 'get',
  path: '/v1/artifacts/{artifactId}/copies',
  operationId: 'listArtifactCopies',
  tags: ['artifacts'],
  summary: "List an artifact's live copies on the nodes the caller sees, by node id",
  request: {
    params: z.object({ artifactId: artifactId.openapi({ param: { name: 'artifactId', in: 'path' } }) }),
    query: pageQuery,
  },
  responses: { 200: json(CopyPageSchema, 'a page of copies'), ...errorResponses },
});

/** Artifact copies: what the storage layer says each node holds (docs/api.md, Artifact copies). */
export function artifactsRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(recordRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:artifacts:write');
    const { id, artifactId } = c.req.valid('param');
    const { path, reason } = c.req.valid('json');
    const { copy, recorded } = await recordArtifactCopy(c.get('deps'), {
      nodeId: id,
      artifactId,
      principal,
      path,
      reason,
    });
    return recorded ? c.json(artifactCopyView(copy), 201) : c.json(artifactCopyView(copy), 200);
  });

  router.openapi(removeRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:artifacts:write');
    const { id, artifactId } = c.req.valid('param');
    const { copy } = await removeArtifactCopy(c.get('deps'), {
      nodeId: id,
      artifactId,
      principal,
      reason: c.req.valid('json').reason,
    });
    return c.json(artifactCopyView(copy), 200);
  });

  router.openapi(nodeCopiesRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { db } = c.get('deps');
    const node = await getVisibleNode(db, c.req.valid('param').id, principal);
    const { cursor, limit } = c.req.valid('query');
    const after = decodeCursor(cursor, idPattern('art'));
    const rows = await listNodeCopies(db, node.id, { after, limit: limit + 1 });
    return c.json(
      page(rows, limit, (copy) => copy.id),
      200,
    );
  });

  router.openapi(artifactCopiesRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { cursor, limit } = c.req.valid('query');
    const after = decodeCursor(cursor, idPattern('art'));
    const rows = await listArtifactCopies(c.get('deps').db, principal, c.req.valid('param').artifactId, {
      after,
      limit: limit + 1,
    });
    return c.json(
      page(rows, limit, (copy) => copy.id),
      200,
    );
  });
  return router;
}
