import { createMiddleware } from 'hono/factory';
import { DrydockError } from '../domain/errors';
import { hashSecret } from '../domain/secrets';
import { may, type Action, type Principal } from '../domain/principal';
import { provisionRules } from '../domain/provision';
import type { NodeRow } from '../db/nodes';
import type { AppEnv } from './env';
import { looksLikeJwt } from './person-tokens';

// Room for a provider's JWT access token (a few hundred bytes to a few KiB with many groups).
const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,8192})$/;

const BOOTSTRAP_OPERATOR: Principal = Object.freeze({
  kind: 'operator',
  keyId: 'bootstrap',
  name: 'bootstrap-operator',
});

/**
 * Resolves the caller from `Authorization: Bearer …`: an API key, a node credential, or (with
 * OpenID Connect configured) a person's access token; 401 for anything missing or unknown.
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const match = BEARER.exec(c.req.header('authorization') ?? '');
  if (!match) throw new DrydockError('UNAUTHENTICATED', 'missing or malformed bearer credential');
  const secret = match[1]!;
  const { apiKeys, bootstrapKeyHash, nodeCredentials, personTokens } = c.get('deps');
  let principal: Principal | null = null;
  if (secret.startsWith(NODE_CREDENTIAL_PREFIX)) {
    // The credential cache hashes the secret itself; a cached one is answered without a promise.
    const pending = nodeCredentials.resolve(secret);
    const resolved = pending instanceof Promise ? await pending : pending;
    if (resolved) {
      refuseExpired(resolved);
      principal = resolved.principal;
      c.set('agentNode', resolved.node);
      c.set('agentCredential', resolved);
    }
  } else {
    const hash = hashSecret(secret);
    if (bootstrapKeyHash && hash === bootstrapKeyHash) {
      principal = BOOTSTRAP_OPERATOR;
    } else if (personTokens && looksLikeJwt(secret)) {
      // A person's access token from the OpenID provider (api/person-tokens.ts): 401 unless it
      // verifies. After the bootstrap key, which its operator may have chosen with two dots.
      principal = await personTokens.resolve(secret);
    } else {
      // A key resolved before is answered without a promise (api/api-keys.ts).
      const pending = apiKeys.resolve(hash);
      principal = pending instanceof Promise ? await pending : pending;
    }
  }
  if (!principal) throw new DrydockError('UNAUTHENTICATED', 'unknown or revoked credential');
  c.set('principal', principal);
  await next();
});

/**
 * 401 unless `authorization` carries the metrics token, when one is configured
 * (DRYDOCK_METRICS_TOKEN): what Prometheus presents to scrape the API's /metrics.
 */
export function requireMetricsToken(deps: { metricsTokenHash?: string }, authorization: string | undefined) {
  if (!deps.metricsTokenHash) return;
  const match = BEARER.exec(authorization ?? '');
  if (!match || hashSecret(match[1]!) !== deps.metricsTokenHash) {
    throw new DrydockError(
      'UNAUTHENTICATED',
      '/metrics takes the metrics token: Authorization: Bearer <DRYDOCK_METRICS_TOKEN>',
    );
  }
}

/** 403 unless the caller holds the action (operators hold every action). */
export function requireAction(principal: Principal, action: Action): void {
  if (principal.kind === 'node') throw nodeCredentialHere();
  if (!may(principal, action)) {
    const refusal = principal.person ? `${principal.name}'s groups grant no` : 'this key lacks';
    throw new DrydockError('FORBIDDEN', `${refusal} ${action}`, { action });
  }
}

/**
 * 401 CREDENTIAL_EXPIRED for a node credential past its end: the agent was away longer than the
 * credential's lifetime, or could not renew it (docs/lifecycle/enrollment.md#credential-renewal).
 */
export function refuseExpired(credential: { expiresAt: number; node: { id: string } }): void {
  if (credential.expiresAt > Date.now()) return;
  const at = new Date(credential.expiresAt).toISOString();
  throw new DrydockError(
    'CREDENTIAL_EXPIRED',
    `the node credential of ${credential.node.id} expired at ${at}: its agent was away longer than the credential's lifetime, or could not renew it; the machine joins again (drydock-agent join --reset --yes)`,
    { nodeId: credential.node.id, expiredAt: at },
  );
}

/** Node credentials start with this; API keys never do. */
const NODE_CREDENTIAL_PREFIX = 'ddn_';

/** 403 unless the caller is an operator. */
export function requireOperator(principal: Principal): void {
  if (principal.kind === 'node') throw nodeCredentialHere();
  if (principal.kind !== 'operator') {
    const needs = principal.person
      ? `an operator (${principal.name}'s groups make a tenant)`
      : 'an operator key';
    throw new DrydockError('FORBIDDEN', `this route needs ${needs}`, { role: 'operator' });
  }
}

function nodeCredentialHere(): DrydockError {
  return new DrydockError('FORBIDDEN', 'node credentials are accepted only on /v1/agent/*', {
    role: 'agent',
  });
}

/**
 * The node an agent route acts for: 403 for API keys, for a node whose provision state does not
 * allow the route (`provisionRules(state).agent`), and for a node whose access is blocked (its
 * files and identity stay; `unblock` lets it back).
 */
export function requireAgent(
  principal: Principal,
  node: NodeRow | undefined,
  options: { purgeOnly?: boolean; beforeAdmission?: boolean } = {},
): NodeRow {
  if (principal.kind !== 'node' || !node) {
    throw new DrydockError('FORBIDDEN', 'agent routes take a node credential', { role: 'agent' });
  }
  const admission = provisionRules(node.provisionState).agent;
  if (admission === 'none' || (admission === 'wait' && !options.beforeAdmission)) {
    const allowed = admission === 'wait' ? ['POST /v1/agent/heartbeat', 'GET /v1/agent/commands'] : [];
    const message =
      admission === 'wait'
        ? `node ${node.id} is ${node.provisionState}: until an operator approves it, it may only heartbeat and wait for commands`
        : `node ${node.id} is ${node.provisionState}: its agent calls are refused`;
    throw new DrydockError('FORBIDDEN', message, { provisionState: node.provisionState, allowed });
  }
  // `purgeOnly`: the caller serves purge commands alone to a blocked node (docs/lifecycle/purge.md).
  if (node.access === 'blocked' && !options.purgeOnly) {
    throw new DrydockError('FORBIDDEN', `node ${node.id} is blocked`, { access: 'blocked' });
  }
  return node;
}
