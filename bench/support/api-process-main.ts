/**
 * The child side of bench/support/api-process.ts: the real API (`listen` from api/server.ts) with
 * its own pool (an API needs nothing else: no Temporal), in a process of its own so a load generator does not share
 * its event loop or core. Takes its settings from BENCH_API_CONFIG and its orders over IPC:
 * `stats`, `profile-start`, `profile-stop` (a V8 CPU profile written to a file), `flush` (the
 * pending heartbeats, now), `flushes` (every heartbeat flush so far, timed), `stop`.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { closeServer, listen } from '../../api/server';
import { createAppDeps } from '../../api/deps';
import { generateCa } from '../../ca';
import { createDb } from '../../db/client';
import type { ApiFlush, ApiProcessConfig, ApiProcessReply, ApiProcessRequest } from './api-process';

async function main(): Promise<void> {
  const config = JSON.parse(process.env.BENCH_API_CONFIG ?? '') as ApiProcessConfig;
  const pool = createDb(config.databaseUrl, { max: config.connections });
  const flushes: ApiFlush[] = [];
  const ca = generateCa();
  // As api/server.ts runs it: the routes and the services beside them (wake-ups, heartbeat flush).
  const services = createAppDeps({
    db: pool.db,
    sql: pool.sql,
    clusterId: 'bench',
    caPrivateKey: ca.privateKey,
    caPublicKeyPem: ca.publicKeyPem,
    bootstrapKeyHash: config.bootstrapKeyHash,
    heartbeats: {
      flushEveryMs: config.heartbeatFlushEveryMs,
      onFlush: ({ rows, durationMs }) => flushes.push({ at: Date.now(), rows, durationMs }),
    },
  });
  await services.start();
  const { server, port } = await listen(services.deps, 0);
  let session: Session | null = null;
  let stopping = false;

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    if ('closeAllConnections' in server) server.closeAllConnections();
    await closeServer(server);
    await services.stop();
    await pool.close();
  };

  const handle = async (message: ApiProcessRequest): Promise<ApiProcessReply> => {
    switch (message.type) {
      case 'stats':
        return {
          id: message.id,
          type: 'stats',
          eventLoop: performance.eventLoopUtilization(),
          cpu: process.cpuUsage(),
        };
      case 'profile-start':
        session ??= new Session();
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: message.intervalUs });
        await session.post('Profiler.start');
        return { id: message.id, type: 'ok' };
      case 'profile-stop': {
        if (!session) throw new Error('no profile running');
        const { profile } = await session.post('Profiler.stop');
        await session.post('Profiler.disable');
        session.disconnect();
        writeFileSync(message.path, JSON.stringify(profile));
        return { id: message.id, type: 'ok' };
      }
      case 'flush':
        await services.deps.heartbeats.flush();
        return { id: message.id, type: 'ok' };
      case 'flushes':
        return { id: message.id, type: 'flushes', flushes };
      case 'stop':
        await stop();
        return { id: message.id, type: 'ok' };
    }
  };

  process.on('message', (message: ApiProcessRequest) => {
    handle(message).then(
      (reply) => {
        process.send!(reply, () => {
          if (message.type === 'stop') process.exit(0);
        });
      },
      (error: unknown) => process.send!({ id: message.id, type: 'error', message: (error as Error).message }),
    );
  });
  // The benchmark went away without stopping us: do not outlive it.
  process.once('disconnect', () => void stop().finally(() => process.exit(1)));
  process.send!({ type: 'listening', port, pid: process.pid } satisfies ApiProcessReply);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
