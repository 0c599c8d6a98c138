import type { Client } from '@temporalio/client';
import type { Principal } from '../domain/principal';
import type { Db } from '../db/client';

/** What the API needs from the outside world; tests build it with the real services. */
export interface AppDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  /** SHA-256 of DRYDOCK_BOOTSTRAP_OPERATOR_KEY, when one is configured. */
  bootstrapKeyHash?: string;
  /** How long a start waits for a worker to take its `begin` before answering UNAVAILABLE. */
  beginTimeoutMs?: number;
}

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    principal: Principal;
    requestId: string;
  };
}
