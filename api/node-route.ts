import { createRoute, type OpenAPIHono, type RouteHandler, type z } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { idPattern } from '../domain/ids';
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
  refuseInvalid,
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

type NodeRouteConfig = ReturnType<typeof nodeRoute>;

/**
 * Serves a `nodeRoute` on `router`, documented as declared. Its path and header are validated by
 * the middleware below rather than by @hono/zod-openapi's own validators, which for headers read
 * every request header: on @hono/node-server that builds a web `Headers` of the whole request, a
 * large share of a node control's CPU. Same schemas, same order (path, headers, then the body),
 * same errors, same `c.req.valid()`.
 */
export function serveNodeRoute<R extends NodeRouteConfig>(
  router: OpenAPIHono<AppEnv>,
  route: R,
  handler: RouteHandler<R, AppEnv>,
): void {
  router.openAPIRegistry.registerPath(route);
  const { params: _params, headers: _headers, ...body } = route.request;
  router.openapi({ ...route, request: body, hide: true, middleware: [validPathAndIfMatch] } as R, handler);
}

const validPathAndIfMatch: MiddlewareHandler<AppEnv> = async (c, next) => {
  const param = await nodeIdParams.safeParseAsync(c.req.param());
  refuseInvalid({ ...param, target: 'param' });
  c.req.addValidatedData('param', param.data!);
  const ifMatch = c.req.header('if-match');
  const header = await ifMatchHeaders.safeParseAsync(ifMatch === undefined ? {} : { 'if-match': ifMatch });
  refuseInvalid({ ...header, target: 'header' });
  c.req.addValidatedData('header', header.data!);
  await next();
};

/** A node id as `nodeIdParams` accepts it. */
const NODE_ID = idPattern('node');

/** The body fields every node route reads into its target. */
type TargetFields = { version?: number; reason?: string };

/**
 * Serves, ahead of the `serveNodeRoute` of `route`, the calls whose input its validators would
 * pass as it is: a well-formed node id, no If-Match, and an `application/json` body that `read`
 * recognises (the bodies clients send most, such as `{}`) and returns as the body schema would
 * have produced it. Any other call falls through to the validated route, so every refusal is the
 * one it gives. The validators (media type, JSON, zod, each a middleware) are a large share of a
 * small control's CPU.
 */
export function serveNodeShortcut<B extends TargetFields>(
  router: OpenAPIHono<AppEnv>,
  route: NodeRouteConfig,
  read: (text: string) => B | undefined,
  handler: (c: Context<AppEnv>, body: B, target: NodeTarget) => Promise<Response>,
): void {
  const path = route.path.replace(/\{(\w+)\}/g, ':$1');
  router.on(route.method.toUpperCase(), path, (c, next) => {
    const nodeId = c.req.param('id');
    const body =
      c.req.header('content-type') === 'application/json' &&
      c.req.header('if-match') === undefined &&
      nodeId !== undefined &&
      NODE_ID.test(nodeId)
        ? read(c.get('bodyText') ?? '')
        : undefined;
    if (body === undefined) return next();
    return handler(c, body, {
      nodeId: nodeId!,
      principal: c.get('principal'),
      version: body.version,
      reason: body.reason,
    });
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
