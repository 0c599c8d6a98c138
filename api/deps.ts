import type { KeyObject } from 'node:crypto';
import type { TracerProvider } from '@opentelemetry/api';
import type { Sql } from 'postgres';
import { DEFAULT_DUPLICATE_SESSION_RULES, type DuplicateSessionRules } from '../db/agent-sessions';
import type { Db } from '../db/client';
import { silentLogger, type Logger } from '../observability/log';
import type { CaEndorsement } from '../domain/signing';
import type { AppDeps } from './env';
import { Heartbeats, type HeartbeatOptions } from './heartbeats';
import { ApiKeys } from './api-keys';
import { NodeCredentials } from './node-credentials';
import { People } from './people';
import { PersonTokens, type OidcSettings } from './person-tokens';
import type { ConsoleSignInSettings } from '../console/oidc';
import { EVENTS_CHANNEL, KEYS_CHANNEL } from '../db/wakeups';
import { createApiMetrics } from '../observability/metrics';
import { NodeWakeups } from './node-events';
import { RateLimits, type RateLimitSettings } from './rate-limit';
import { generateSshCa, type SshCa } from './ssh-ca';

export interface AppDepsInput {
  db: Db;
  /** The raw driver of `db`: it holds the LISTEN connection for agent wake-ups and the event feed. */
  sql: Sql;
  /** Unset: nothing is logged (tests and benchmarks that do not read the lines). */
  log?: Logger;
  clusterId: string;
  /** The cluster CA's key: it signs purge commands. */
  caPrivateKey: KeyObject;
  caPublicKeyPem: string;
  caEndorsements?: CaEndorsement[];
  /** Signs break-glass SSH certificates; unset: a key of this process's own (tests, benchmarks). */
  sshCa?: SshCa;
  bootstrapKeyHash?: string;
  /** Trust this OpenID provider's access tokens as people's credentials; unset: none is trusted. */
  oidc?: OidcSettings;
  /** SHA-256 of DRYDOCK_METRICS_TOKEN: /metrics answers only a bearer of it. Unset: anyone. */
  metricsTokenHash?: string;
  heartbeats?: HeartbeatOptions;
  /** When alternating agent runs of one identity quarantine it (default: more than 3 in 10 min). */
  duplicateSessions?: DuplicateSessionRules;
  /** Per-address limits (defaults: `DEFAULT_RATE_LIMITS`). */
  rateLimits?: RateLimitSettings;
  /** How people sign in to the console (unset: with an API key only). */
  consoleSignIn?: ConsoleSignInSettings;
  temporalUiUrl?: string;
  /** The workflows' Temporal namespace (default `default`). */
  temporalNamespace?: string;
  tracerProvider?: TracerProvider;
}

/** Everything one API process runs beside its routes: agent wake-ups and the heartbeat flush. */
export function createAppDeps(input: AppDepsInput) {
  const wakeups = new NodeWakeups(input.sql);
  const feedWakeups = new NodeWakeups(input.sql, EVENTS_CHANNEL);
  const keyWakeups = new NodeWakeups(input.sql, KEYS_CHANNEL);
  const log = input.log ?? silentLogger();
  const metrics = createApiMetrics({
    commands: () => wakeups.waitingTotal(),
    events: () => feedWakeups.waitingTotal(),
  });
  const heartbeats = new Heartbeats(input.db, {
    ...input.heartbeats,
    log,
    onFlush: (flush) => {
      metrics.flush(flush);
      input.heartbeats?.onFlush?.(flush);
    },
  });
  const deps: AppDeps = {
    db: input.db,
    log,
    clusterId: input.clusterId,
    purgeSigner: { clusterId: input.clusterId, privateKey: input.caPrivateKey },
    caPublicKeyPem: input.caPublicKeyPem,
    caEndorsements: input.caEndorsements,
    sshCa: input.sshCa ?? generateSshCa(),
    bootstrapKeyHash: input.bootstrapKeyHash,
    metricsTokenHash: input.metricsTokenHash,
    wakeups,
    feedWakeups,
    nodeCredentials: new NodeCredentials(input.db, wakeups),
    apiKeys: new ApiKeys(input.db, keyWakeups),
    personTokens: input.oidc ? new PersonTokens(input.oidc, new People(input.db)) : undefined,
    heartbeats,
    duplicateSessions: input.duplicateSessions ?? DEFAULT_DUPLICATE_SESSION_RULES,
    rateLimits: new RateLimits(input.db, input.rateLimits),
    metrics,
    consoleSignIn: input.consoleSignIn,
    temporalUiUrl: input.temporalUiUrl?.replace(/\/+$/, ''),
    temporalNamespace: input.temporalNamespace ?? 'default',
    tracerProvider: input.tracerProvider,
  };
  return {
    deps,
    async start(): Promise<void> {
      await wakeups.start();
      await feedWakeups.start();
      await keyWakeups.start();
      heartbeats.start();
    },
    async stop(): Promise<void> {
      await heartbeats.stop();
      await wakeups.stop();
      await feedWakeups.stop();
      await keyWakeups.stop();
    },
  };
}
