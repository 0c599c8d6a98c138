import { createRoute, type z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Principal } from '../domain/principal';
import type { AppEnv } from './env';
import type { Tag } from './openapi';
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
  operationId: string;
  tags: [Tag];
  summary: string;
  body: B;
  bodyRequired?: boolean;
  answer: A;
}) {
  return createRoute({
    method: spec.method ?? ('post' as M),
    path: spec.path,
    operationId: spec.operationId,
    tags: spec.tags,
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

type NodeRouteContext = Context<
  AppEnv,
  string,
  {
    out: {
      param: { id: string };
      header: { 'if-match'?: number };
      json: { version?: number; reason?: string };
    };
  }
>;

/** The target of a `nodeRoute` call, from its validated path, headers and body. */
export function nodeTarget(c: NodeRouteContext): NodeTarget {
  const body = c.req.valid('json');
  return {
    nodeId: c.req.valid('param').id,
    principal: c.get('principal'),
    version: expectedVersion(body.version, c.req.valid('header')['if-match']),
    reason: body.reason,
  };
}
