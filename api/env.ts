import type { TracerProvider } from '@opentelemetry/api';
import type { Logger } from '../observability/log';
import type { Principal } from '../domain/principal';
import type { CaEndorsement } from '../domain/signing';
import type { DuplicateSessionRules } from '../db/agent-sessions';
import type { Db } from '../db/client';
import type { NodeRow } from '../db/nodes';
import type { PurgeSigner } from '../db/requests/purge';
import type { ApiMetrics } from '../observability/metrics';
import type { ApiKeys } from './api-keys';
import type { Heartbeats } from './heartbeats';
import type { Credential, NodeCredentials } from './node-credentials';
import type { NodeWakeups } from './node-events';
import type { PersonTokens } from './person-tokens';
import type { ConsoleSignInSettings } from '../console/oidc';
import type { RateLimits } from './rate-limit';
import type { SshCa } from './ssh-ca';

/** What the API needs from the outside world; tests build it with the real services. */
export interface AppDeps {
  db: Db;
  /** The process's logger: the access log, and what the services report. */
  log: Logger;
  /** SHA-256 of DRYDOCK_BOOTSTRAP_OPERATOR_KEY, when one is configured. */
  bootstrapKeyHash?: string;
  /** SHA-256 of DRYDOCK_METRICS_TOKEN, when one is configured: /metrics then takes it as a bearer. */
  metricsTokenHash?: string;
  clusterId: string;
  /** What signs purge commands (the cluster CA's key) in the request that queues them. */
  purgeSigner: PurgeSigner;
  /** The cluster CA's public key (PEM), handed to agents at join. */
  caPublicKeyPem: string;
  /** The chain that endorses it to agents that joined under an earlier CA key (none: no rotation). */
  caEndorsements?: CaEndorsement[];
  /** The cluster's SSH CA: it signs break-glass SSH certificates (docs/security.md#break-glass-ssh). */
  sshCa: SshCa;
  wakeups: NodeWakeups;
  /** Wakes the event feed's long-polls when any API process commits an event. */
  feedWakeups: NodeWakeups;
  nodeCredentials: NodeCredentials;
  /** API keys resolved so far, forgotten as soon as any process changes them. */
  apiKeys: ApiKeys;
  /** People's access tokens from the OpenID provider; unset (no OIDC configured): a JWT is an unknown secret. */
  personTokens?: PersonTokens;
  heartbeats: Heartbeats;
  /** When alternating agent runs of one identity quarantine it. */
  duplicateSessions: DuplicateSessionRules;
  rateLimits: RateLimits;
  /** This app's Prometheus registry and instruments, served at /metrics. */
  metrics: ApiMetrics;
  /** How people sign in to the console: an API key, the OpenID provider, or both (unset: a key). */
  consoleSignIn?: ConsoleSignInSettings;
  /** The Temporal Web UI the console links workflows to; unset: no links. */
  temporalUiUrl?: string;
  /** The Temporal namespace the workers run the workflows in (the UI's links name it). */
  temporalNamespace: string;
  /** Where request spans go (observability/tracing.ts); unset: no tracing middleware at all. */
  tracerProvider?: TracerProvider;
}

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    principal: Principal;
    requestId: string;
    /** The node behind a node credential, as read when the request was authenticated. */
    agentNode?: NodeRow;
    /** That credential's end (epoch ms) and, for the heartbeat's answer, its lifetime. */
    agentCredential?: Pick<Credential, 'expiresAt' | 'lifetime'>;
  };
}
