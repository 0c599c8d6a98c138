import { createHash, randomBytes } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { createMiddleware } from 'hono/factory';
import { DrydockError } from '../domain/errors';
import { may, type Action, type Principal } from '../domain/principal';
import { apiKeys } from '../db/schema';
import type { AppEnv } from './env';

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A new API key secret: 32 random bytes, base64url, with a recognisable prefix. */
export function newSecret(prefix = 'ddk'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/;

/** Resolves the caller from `Authorization: Bearer …`; 401 for anything missing or unknown. */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const match = BEARER.exec(c.req.header('authorization') ?? '');
  if (!match) throw new DrydockError('UNAUTHENTICATED', 'missing or malformed bearer credential');
  const hash = hashSecret(match[1]!);
  const { bootstrapKeyHash, db } = c.get('deps');
  let principal: Principal | null = null;
  if (bootstrapKeyHash && hash === bootstrapKeyHash) {
    principal = { kind: 'operator', keyId: 'bootstrap', name: 'bootstrap-operator' };
  } else {
    const [key] = await db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.secretHash, hash), isNull(apiKeys.revokedAt)));
    if (key) {
      principal = key.tenantId
        ? { kind: 'tenant', keyId: key.id, name: key.name, tenantId: key.tenantId, actions: key.actions }
        : { kind: 'operator', keyId: key.id, name: key.name };
    }
  }
  if (!principal) throw new DrydockError('UNAUTHENTICATED', 'unknown or revoked credential');
  c.set('principal', principal);
  await next();
});

/** 403 unless the caller holds the action (operators hold every action). */
export function requireAction(principal: Principal, action: Action): void {
  if (!may(principal, action)) {
    throw new DrydockError('FORBIDDEN', `this key lacks ${action}`, { action });
  }
}

/** 403 unless the caller is an operator. */
export function requireOperator(principal: Principal): void {
  if (principal.kind !== 'operator') {
    throw new DrydockError('FORBIDDEN', 'this route needs an operator key', { role: 'operator' });
  }
}
