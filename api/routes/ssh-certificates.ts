import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import {
  DEFAULT_SSH_CERTIFICATE_TTL_MS,
  MAX_SSH_CERTIFICATE_TTL_MS,
  MIN_SSH_CERTIFICATE_TTL_MS,
} from '../../domain/ssh-certificates';
import { getOperableNode } from '../../db/queries/nodes';
import { listSshCertificates, sshCertificateView } from '../../db/queries/ssh-certificates';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { decodeCursor, page } from '../pagination';
import {
  boundedDuration,
  cursor,
  errorResponses,
  json,
  jsonBody,
  limit,
  nodeIdParams,
  reason,
} from '../schemas';
import { issueSshCertificate, revokeSshCertificate } from '../services/ssh-certificates';

const SshCertificateSchema = z
  .object({
    serial: z
      .number()
      .int()
      .openapi({ description: "the certificate's serial, as sshd logs it and the KRL names it" }),
    nodeId: z.string(),
    principal: z.string().openapi({ example: 'drydock-node:node_01k5w8v3x9q2m4n6p8r0s2t4v6' }),
    keyId: z
      .string()
      .openapi({ description: 'who asked, for which node and why; sshd logs it with each login' }),
    publicKeyFingerprint: z
      .string()
      .openapi({ example: 'SHA256:n5V5WMWKZFP931VhbuCJJKrXpL4Sl6mD7K/Z9SN+rts' }),
    issuedBy: z.string(),
    reason: z.string(),
    issuedAt: z.string(),
    validAfter: z.string(),
    validBefore: z.string(),
    revokedAt: z.string().nullable(),
    revokedBy: z.string().nullable(),
    revokedReason: z.string().nullable(),
  })
  .openapi('SshCertificate');

const ttl = boundedDuration(
  { min: MIN_SSH_CERTIFICATE_TTL_MS, max: MAX_SSH_CERTIFICATE_TTL_MS },
  { min: '1m', max: '1h', form: '15m or 1h' },
).openapi({
  type: 'string',
  example: '15m',
  description: 'how long the certificate is valid (default 15m, at least 1m, at most 1h)',
});

const publicKey = z
  .string()
  .min(1, 'must not be empty')
  .max(8192, { error: 'is at most 8192 characters', abort: true })
  .regex(/^[^\r\n]+\r?\n?$/, 'is one line')
  .openapi({
    description:
      'the OpenSSH public key to certify, one line as in ~/.ssh/id_ed25519.pub (Ed25519, or RSA of at least 2048 bits)',
    example: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGb1n6c3oV0nN9tQ0s3Q2W6e7rXo2wq0kJ1v6yYx9H2L alice@laptop',
  });

/** A certificate's serial in a path or cursor: a positive decimal integer below 10^15. */
const SERIAL = /^[1-9]\d{0,14}$/;

const certificateParams = nodeIdParams.extend({
  serial: z
    .string()
    .regex(SERIAL, 'a certificate serial: a positive decimal integer')
    .transform(Number)
    // Said again for the document: after the transform it would show the serial as any string.
    .openapi({
      param: { name: 'serial', in: 'path' },
      type: 'string',
      pattern: SERIAL.source,
      example: '42',
    }),
});

const issueRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/ssh-certificates',
  operationId: 'issueNodeSshCertificate',
  tags: ['ssh'],
  summary:
    "Break-glass SSH: a short-lived OpenSSH user certificate for the caller's key, valid as root on this node only",
  request: {
    params: nodeIdParams,
    ...jsonBody(z.strictObject({ publicKey, reason, ttl: ttl.optional() }), true),
  },
  responses: {
    201: json(
      SshCertificateSchema.extend({
        certificate: z.string().openapi({
          description: 'the OpenSSH certificate, one line: save it as <key>-cert.pub beside the private key',
        }),
      }),
      'issued',
    ),
    ...errorResponses,
  },
});

const listRoute = createRoute({
  method: 'get',
  path: '/v1/nodes/{id}/ssh-certificates',
  operationId: 'listNodeSshCertificates',
  tags: ['ssh'],
  summary: "The node's break-glass SSH certificates, newest first (the records; never the certificates)",
  request: {
    params: nodeIdParams,
    query: z.strictObject({ limit: limit(100, 20), cursor: cursor.optional() }),
  },
  responses: {
    200: json(
      z.object({ items: z.array(SshCertificateSchema), nextCursor: z.string().nullable() }),
      'a page of certificates',
    ),
    ...errorResponses,
  },
});

const revokeRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/ssh-certificates/{serial}/revoke',
  operationId: 'revokeNodeSshCertificate',
  tags: ['ssh'],
  summary: "Revoke a certificate: the node's agent puts it in sshd's KRL at its next refresh",
  request: { params: certificateParams, ...jsonBody(z.strictObject({ reason }), true) },
  responses: {
    200: json(SshCertificateSchema, 'the certificate, revoked (now, or before)'),
    ...errorResponses,
  },
});

/** Break-glass SSH certificates of a node (docs/security.md#break-glass-ssh). */
export function sshCertificateRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(issueRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:ssh-root');
    const body = c.req.valid('json');
    const { row, certificate } = await issueSshCertificate(c.get('deps'), {
      principal,
      nodeId: c.req.valid('param').id,
      publicKey: body.publicKey,
      reason: body.reason,
      ttlMs: body.ttl ?? DEFAULT_SSH_CERTIFICATE_TTL_MS,
    });
    return c.json({ ...sshCertificateView(row), certificate }, 201);
  });

  router.openapi(listRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const deps = c.get('deps');
    const node = await getOperableNode(deps.db, c.req.valid('param').id, principal);
    const q = c.req.valid('query');
    const before = decodeCursor(q.cursor, SERIAL);
    const rows = await listSshCertificates(deps.db, node.id, {
      before: before === undefined ? undefined : Number(before),
      limit: q.limit + 1,
    });
    const listed = page(rows, q.limit, (row) => String(row.serial));
    return c.json({ items: listed.items.map(sshCertificateView), nextCursor: listed.nextCursor }, 200);
  });

  router.openapi(revokeRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:ssh-root');
    const params = c.req.valid('param');
    const row = await revokeSshCertificate(c.get('deps'), {
      principal,
      nodeId: params.id,
      serial: params.serial,
      reason: c.req.valid('json').reason,
    });
    return c.json(sshCertificateView(row), 200);
  });

  return router;
}
