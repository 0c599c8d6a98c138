import type { z } from '@hono/zod-openapi';
import { createRoute } from '@hono/zod-openapi';
import type { Principal } from '../domain/principal';
import {
  errorResponses,
  expectedVersion,
  ifMatchHeaders,
  json,
  jsonBody,
  NodeSchema,
  nodeIdParams,
} from './schemas';

/** The answer of most routes on one node: the node as it is after the call. */
export const nodeAnswer = json(NodeSchema, 'the node');

type Answer = ReturnType<typeof json<z.ZodType>>;

/**
 * A route on one node (`/v1/nodes/{id}/…`): the node id in the path, the version the caller read
 * in the body or `If-Match`, and a JSON body (required when `bodyRequired`).
 */
export function nodeRoute<B extends z.ZodType, A extends Answer, M extends 'post' | 'delete' = 'post'>(spec: {
  method?: M;
  path: string;
  summary: string;
  body: B;
  bodyRequired?: boolean;
  answer: A;
}) {
  return createRoute({
    method: spec.method ?? ('post' as M),
    path: spec.path,
    summary: spec.summary,
    request: { params: nodeIdParams, headers: ifMatchHeaders, ...jsonBody(spec.body, spec.bodyRequired) },
    responses: { 200: spec.answer, ...errorResponses },
  });
}

/** What a service needs to change one node: who, which node, at which version, and why. */
export interface NodeTarget {
  nodeId: string;
  principal: Principal;
  version?: number;
  reason?: string | null;
}

/** The target of a `nodeRoute` call, from its validated path, headers and body. */
export function nodeTarget(
  principal: Principal,
  request: {
    param: { id: string };
    header: { 'if-match'?: number };
    body: { version?: number; reason?: string };
  },
): NodeTarget {
  return {
    nodeId: request.param.id,
    principal,
    version: expectedVersion(request.body.version, request.header['if-match']),
    reason: request.body.reason,
  };
}
