/** Who is calling: an operator key, or a tenant key bound to one tenant and a list of actions. */
export type Principal =
  | { kind: 'operator'; keyId: string; name: string }
  | { kind: 'tenant'; keyId: string; name: string; tenantId: string; actions: string[] };

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
  'compute:allocations:write',
  'compute:tokens:read',
  'compute:tokens:write',
] as const;
export type Action = (typeof ACTIONS)[number];

export function may(principal: Principal, action: Action): boolean {
  return principal.kind === 'operator' || principal.actions.includes(action);
}

/** The name recorded as `actor` on events and operations. */
export function actorOf(principal: Principal): string {
  return `key:${principal.name}`;
}
