import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { AgentClient } from '../../agent/client';
import { CommandHandlers } from '../../agent/commands';
import { Connections } from '../../agent/connections';
import { AgentSession } from '../../agent/session';
import { newId } from '../../domain/ids';
import { nodeCommands } from '../../db/schema';
import { wakeNode } from '../../db/wakeups';
import { freePort } from '../../scripts/services/process';
import { joinedPoolNode } from '../support/builders';
import { eventually, useHarness, type Harness } from '../support/harness';
import { killWorker as killProcess } from '../support/worker-process';

const h = useHarness({ worker: false });

/** The real API entry point (`entry/api.ts`) as a child process; resolves once it listens. */
async function startApi(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'entry/api.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: h.databaseUrl,
      TEMPORAL_ADDRESS: h.temporalAddress,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      PORT: String(port),
      DRYDOCK_CA_KEY_FILE: h.caKeyFile,
      DRYDOCK_CLUSTER_ID: h.clusterId,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the API exited (${code}) before it listened`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('listening')) resolve();
    });
  });
  return child;
}

interface Poll {
  startedAt: number;
  endedAt?: number;
  error?: string;
}

/** The agent's real client, with a record of every long-poll and every ack it made. */
class RecordingClient extends AgentClient {
  readonly polls: Poll[] = [];
  readonly acks: string[] = [];

  override async commands(waitSeconds: number, signal?: AbortSignal) {
    const poll: Poll = { startedAt: Date.now() };
    this.polls.push(poll);
    try {
      return await super.commands(waitSeconds, signal);
    } catch (error) {
      poll.error = (error as Error).name;
      throw error;
    } finally {
      poll.endedAt = Date.now();
    }
  }

  override async ack(id: string, signal?: AbortSignal) {
    await super.ack(id, signal);
    this.acks.push(id);
  }
}

/** A command as a worker queues one: the row, and the wake-up every API process listens for. */
async function queueCommand(harness: Harness, nodeId: string): Promise<string> {
  const id = newId('cmd');
  await harness.db.transaction(async (tx) => {
    await tx.insert(nodeCommands).values({ id, nodeId, kind: 'remediate', action: 'reboot' });
    await wakeNode(tx, nodeId);
  });
  return id;
}

const statusOf = async (id: string) =>
  (await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, id)))[0]?.status;

describe('the API restarted while an agent long-polls', () => {
  it('a command queued while the API is down is delivered once it is back, exactly once', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-api');
    const port = await freePort();
    let api = await startApi(port);
    const connections = new Connections();
    const client = new RecordingClient(`http://127.0.0.1:${port}`, credential, connections);
    const handled: string[] = [];
    const logs: string[] = [];
    const session = new AgentSession({
      client,
      identity: { nodeId, clusterId: h.clusterId, caPublicKey: h.ca.publicKeyPem },
      handlers: new CommandHandlers().on('remediate', async (command) => {
        handled.push(command.id);
        return { outcome: 'ack' };
      }),
      log: (_level, message) => void logs.push(message),
    });
    try {
      session.start();
      // A first command with the API up: its ack is in, and the agent long-polls again.
      const before = await queueCommand(h, nodeId);
      await eventually(async () => (await statusOf(before)) === 'acked');
      const inFlight = await eventually(async () => {
        const last = client.polls.at(-1);
        return client.acks.length === 1 && last && last.endedAt === undefined ? last : undefined;
      });

      await killProcess(api);
      const during = await queueCommand(h, nodeId);
      // The poll in flight broke; the agent keeps trying, further apart each time.
      await eventually(async () => client.polls.filter((p) => p.error).length >= 4, 30_000);
      expect(inFlight.error).toBe('Unreachable');
      expect(session.state).toBe('running');
      const failed = client.polls.filter((p) => p.error);
      const gaps = failed.slice(1).map((p, i) => p.startedAt - failed[i]!.startedAt);
      expect(gaps[2]).toBeGreaterThan(gaps[0]!);
      expect(handled).toEqual([before]);

      api = await startApi(port);
      await eventually(async () => (await statusOf(during)) === 'acked', 30_000);
      // Delivered, carried out and acked once; the agent then long-polls again, nothing doubled.
      await eventually(async () => {
        const last = client.polls.at(-1);
        return client.acks.length === 2 && last?.endedAt === undefined;
      });
      expect(handled).toEqual([before, during]);
      expect(client.acks).toEqual([before, during]);
      expect(session.state).toBe('running');
      expect(logs).toContain(`reconnected to http://127.0.0.1:${port}`);
    } finally {
      await session.stop();
      connections.close();
      await killProcess(api);
    }
  });
});
