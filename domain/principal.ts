import { DrydockError } from './errors';

/**
 * A person signed in at the OpenID provider, behind an operator or tenant principal: the provider,
 * the token's subject (stable at the provider) and its email claim, when it has one.
 */
export interface Person {
  issuer: string;
  subject: string;
  email: string | null;
}

/**
 * Who is calling: an operator key; a tenant key bound to one tenant and a list of actions; or a
 * node credential, bound to one node and accepted only on `/v1/agent/*`. A person whose groups
 * map to operator or to a tenant is that principal with `person` set (docs/sign-in.md): every
 * rule that holds for a key of the kind holds for them.
 */
export type Principal =
  | { kind: 'operator'; keyId: string; name: string; person?: Person }
  | { kind: 'tenant'; keyId: string; name: string; tenantId: string; actions: string[]; person?: Person }
  | { kind: 'node'; nodeId: string; credentialId: string; name: string };

export const ACTIONS = [
  'compute:nodes:read',
  'compute:nodes:cordon',
  'compute:nodes:drain',
  'compute:nodes:update',
  'compute:nodes:provision',
  'compute:nodes:block',
  'compute:nodes:revoke-identity',
  'compute:nodes:delete',
  'compute:nodes:remediate',
  'compute:nodes:command',
  'compute:nodes:observe',
  'compute:nodes:ssh-root',
  'compute:allocations:write',
  'compute:allocations:observe',
  'compute:artifacts:write',
  'compute:tokens:read',
  'compute:tokens:write',
] as const;
export type Action = (typeof ACTIONS)[number];

export function may(principal: Principal, action: Action): boolean {
  switch (principal.kind) {
    case 'operator':
      return true;
    case 'tenant':
      return principal.actions.includes(action);
    case 'node':
      return false;
  }
}

/**
 * 403 unless the principal may operate what belongs to `owned`'s tenant: operators every node and
 * pool; a tenant key only its own tenant's. A tenant sees another tenant's pool it was granted,
 * but a grant is a right to place work there, not to operate it: node controls, lifecycle
 * operations, join tokens and pool drains stay the owner's and the operators' (docs/security.md).
 */
export function requireOwner(
  principal: Principal,
  owned: { tenantId: string | null; poolId: string | null },
  what: string,
): void {
  if (principal.kind !== 'tenant' || owned.tenantId === principal.tenantId) return;
  throw new DrydockError(
    'FORBIDDEN',
    `${what} belongs to ${owned.tenantId ?? 'the operators'}: a grant of pool ${owned.poolId} lets ` +
      `${principal.tenantId} place work there, not operate it`,
    { poolId: owned.poolId, grant: 'placement' },
  );
}

/** The name recorded as `actor` on events and operations: `key:<name>`, `node:<id>` or `user:<email or subject>`. */
export function actorOf(principal: Principal): string {
  if (principal.kind === 'node') return `node:${principal.nodeId}`;
  if (principal.person) return `user:${principal.person.email ?? principal.person.subject}`;
  return `key:${principal.name}`;
}

/**
 * Whose Idempotency-Keys a request's key is one of: the API key's id (`bootstrap` for the
 * bootstrap operator key), the node credential's id, or a person's `user:<subject>` (their
 * `keyId`). Another caller's key never collides.
 */
export function idempotencyScope(principal: Principal): string {
  return principal.kind === 'node' ? principal.credentialId : principal.keyId;
}
