import { join } from 'node:path';
import { mapLimited } from '../cli-kit/map-limited';
import { AgentClient } from './client';
import { CommandHandlers, type CommandHandler } from './commands';
import { Connections } from './connections';
import {
  dataFiles,
  readIdentity,
  readPrivateKey,
  updateCaPublicKey,
  updateCredential,
  type Identity,
} from './identity';
import { renewalWith } from './renewal';
import { EMPTY_INVENTORY, type Inventory } from './inventory';
import { joinCluster } from './join';
import { simulatedPurgeHandler } from './purge';
import { FileJournal, MemoryJournal, type Journal } from './journal';
import { silentLog, withFields, type Log } from './log';
import { AgentSession, type SessionEnd } from './session';
import { sleep } from './backoff';
import {
  SIMULATED_ACTIONS,
  SimulatedBoot,
  simulatedActions,
  type ActionOutcome,
  type SimulatedAction,
} from './simulated-actions';

/** How long a simulated reboot keeps the machine away. */
const DEFAULT_REBOOT_MS = 3_000;

/** One machine the simulator plays. */
export interface SimulatedMachine {
  hostname: string;
  /** Its join token (default: the simulator's `token`); none joins it `pending`. */
  token?: string;
  displayName?: string;
  poolId?: string;
  inventory?: Inventory;
}

export interface SimulatorOptions {
  api: string;
  /** The join token of every machine that names none. */
  token?: string;
  /** `count` machines named `<hostnamePrefix>-0001`…, unless `machines` names them. */
  count?: number;
  hostnamePrefix?: string;
  machines?: SimulatedMachine[];
  heartbeatEveryMs?: number;
  /** Inventory of machines that name none: one for all, or one per machine by index. */
  inventory?: Inventory | ((index: number) => Inventory);
  /** Long-poll the command stream (default true). A heartbeat benchmark turns it off. */
  commands?: boolean;
  pollWaitSeconds?: number;
  /**
   * Keep identities in `<dataRoot>/<hostname>/` in the real agent's data-directory format: a
   * machine whose identity loads from there does not join again.
   */
  dataRoot?: string;
  /** Sockets shared by heartbeats, joins and acks (long-polls have their own). */
  maxSockets?: number;
  /** How many joins run at once. */
  joinConcurrency?: number;
  log?: Log;
  backoff?: { baseMs?: number; capMs?: number };
  /** The actions `run` commands name (default `SIMULATED_ACTIONS`: diagnostics, logs, driver-upgrade, acceptance, reboot). */
  actions?: Record<string, SimulatedAction>;
  /** How long a simulated reboot keeps a machine away before it comes back on a new boot (default 3 s). */
  rebootMs?: number;
}

/** A simulated agent: its node, and how its session stands. */
export interface SimulatedAgent {
  nodeId: string;
  hostname: string;
  /** The provision state at join; absent when the identity came from `dataRoot`. */
  provisionState?: string;
  /** Whether it joined now (false: its identity was loaded). */
  joined: boolean;
  identity: Identity;
  client: AgentClient;
  session: AgentSession;
  journal: Journal;
  /** Its machine's boot: a simulated reboot renews it. */
  boot: SimulatedBoot;
}

/**
 * How simulated agents answer a remediation command: `clear` acks and then reports its conditions
 * cleared, `ack` acks and leaves them (the action ran, the fault stays), `fail` refuses (the action
 * failed), `ignore` says nothing. One answer for every action, or one per action name (an action
 * not named is ignored).
 */
export type RemediationAnswer = 'clear' | 'ack' | 'fail' | 'ignore';
export type RemediationBehaviour = RemediationAnswer | Partial<Record<string, RemediationAnswer>>;

export interface Simulator {
  readonly agents: readonly SimulatedAgent[];
  agent(nodeId: string): SimulatedAgent;
  /** Says goodbye for the agent: its node goes `offline`. */
  stop(nodeId: string): Promise<void>;
  /** Falls silent without a goodbye (stops heartbeating and polling), as a cut-off machine does. */
  pause(nodeId: string): Promise<void>;
  resume(nodeId: string): void;
  /**
   * Every agent answers commands of `kind` with `handler` (ack, refuse or ignore). Purge has a
   * handler from the start: checked like the real agent's, acked when genuine, nothing deleted.
   */
  onCommand(kind: string, handler: CommandHandler): void;
  /** Reports a fault condition for the agent, as a real node's health checks would. */
  reportCondition(nodeId: string, type: string, status: boolean, reason?: string): Promise<void>;
  /** How agents answer remediation commands (`RemediationBehaviour`). For every agent, or one node. */
  remediation(behaviour: RemediationBehaviour, nodeId?: string): void;
  /**
   * How simulated actions end from now on (`fail`: exit 1), by action name; an action not named
   * succeeds. For every agent, or one node.
   */
  actionOutcomes(outcomes: Partial<Record<string, ActionOutcome>>, nodeId?: string): void;
  /** Stops every session, without goodbyes unless asked, and closes the sockets. */
  close(options?: { goodbye?: boolean }): Promise<void>;
}

/**
 * Runs many agents in one process against an API: joins them (or loads their identities), then
 * runs the same session code as `drydock-agent run` for each. For demos, tests and benchmarks.
 */
export async function createSimulator(options: SimulatorOptions): Promise<Simulator> {
  const machines = options.machines ?? plannedMachines(options);
  const connections = new Connections({ maxSockets: options.maxSockets ?? 64 });
  const anonymous = new AgentClient(options.api, undefined, connections);
  const handlers = new CommandHandlers().on('purge', simulatedPurgeHandler);
  const log = options.log ?? silentLog;

  const agents: SimulatedAgent[] = [];
  const outcomes = new Map<string, Partial<Record<string, ActionOutcome>>>();
  /** Aborts when the simulator closes: a reboot in progress does not come back. */
  const closing = new AbortController();
  let defaultOutcomes: Partial<Record<string, ActionOutcome>> = {};
  try {
    const identities = await mapLimited(machines, options.joinConcurrency ?? 16, async (machine, index) => {
      const dataDir = options.dataRoot ? join(options.dataRoot, machine.hostname) : undefined;
      const stored = dataDir ? readIdentity(dataDir) : null;
      if (stored) {
        return { machine, dataDir, identity: stored, privateKeyPem: readPrivateKey(dataDir!), joined: false };
      }
      const inventory =
        machine.inventory ??
        (typeof options.inventory === 'function' ? options.inventory(index) : options.inventory) ??
        EMPTY_INVENTORY;
      const { identity, provisionState, privateKeyPem } = await joinCluster(
        anonymous,
        {
          token: machine.token ?? options.token,
          hostname: machine.hostname,
          displayName: machine.displayName,
          poolId: machine.poolId,
          inventory,
        },
        dataDir,
      );
      return { machine, dataDir, identity, provisionState, privateKeyPem, joined: true };
    });
    for (const { machine, dataDir, identity, provisionState, privateKeyPem, joined } of identities) {
      const journal = dataDir ? new FileJournal(dataFiles(dataDir).journal) : new MemoryJournal();
      const agentLog = withFields(log, { hostname: machine.hostname, nodeId: identity.nodeId });
      const client = new AgentClient(options.api, identity.credential, connections);
      const boot = new SimulatedBoot();
      // A simulated reboot: silent at once, back after `rebootMs` on a new boot (after the run returned).
      const restart = () =>
        void (async () => {
          agentLog('info', 'simulated reboot');
          await session.pause();
          await sleep(options.rebootMs ?? DEFAULT_REBOOT_MS, closing.signal);
          boot.renew();
          session.start();
        })();
      const runner = simulatedActions(
        options.actions ?? SIMULATED_ACTIONS,
        (action) => (outcomes.get(identity.nodeId) ?? defaultOutcomes)[action] ?? 'succeed',
        restart,
      );
      const session: AgentSession = new AgentSession({
        client,
        identity,
        persistCaKey: dataDir ? (caPublicKey) => updateCaPublicKey(dataDir, caPublicKey) : undefined,
        dataDir,
        heartbeatEveryMs: options.heartbeatEveryMs,
        commands: options.commands,
        pollWaitSeconds: options.pollWaitSeconds,
        handlers,
        runner,
        boot: () => boot.get(),
        renewal: renewalWith(
          privateKeyPem,
          dataDir ? (credential) => updateCredential(dataDir, credential) : undefined,
        ),
        journal,
        log: agentLog,
        backoff: options.backoff,
      });
      void session.ended.then((end: SessionEnd) => {
        if (end.reason === 'revoked')
          agentLog('warn', `identity no longer valid (${end.message}); agent ended`);
        else if (end.reason === 'final')
          agentLog('info', `${end.kind} ${end.commandId} acknowledged as its last word; agent ended`);
      });
      agents.push({
        nodeId: identity.nodeId,
        hostname: machine.hostname,
        provisionState,
        joined,
        identity,
        client,
        session,
        journal,
        boot,
      });
    }
  } catch (error) {
    connections.close();
    throw error;
  }
  for (const agent of agents) agent.session.start();

  const byId = new Map(agents.map((a) => [a.nodeId, a]));
  const agent = (nodeId: string) => {
    const found = byId.get(nodeId);
    if (!found) throw new Error(`no simulated agent for ${nodeId}`);
    return found;
  };
  // Conditions each agent reported true, so that a `clear` remediation can clear them.
  const reported = new Map<string, Set<string>>();
  const behaviours = new Map<string, RemediationBehaviour>();
  let defaultBehaviour: RemediationBehaviour = 'ignore';
  handlers.on('remediate', async (command, context) => {
    const behaviour = behaviours.get(context.nodeId) ?? defaultBehaviour;
    const answer = typeof behaviour === 'string' ? behaviour : (behaviour[command.action ?? ''] ?? 'ignore');
    if (answer === 'ignore') return { outcome: 'ignore' };
    if (answer === 'fail')
      return { outcome: 'refuse', reason: `${command.action ?? 'remediation'} failed (simulated)` };
    if (answer === 'ack') return { outcome: 'ack' };
    return {
      outcome: 'ack',
      after: async () => {
        for (const type of reported.get(context.nodeId) ?? []) {
          await agent(context.nodeId).client.reportCondition(type, false);
        }
        reported.delete(context.nodeId);
      },
    };
  });
  return {
    agents,
    agent,
    async reportCondition(nodeId, type, status, reason) {
      // Noted before the report goes out: its remediation command may arrive before the answer.
      const types = reported.get(nodeId) ?? new Set<string>();
      if (status) types.add(type);
      else types.delete(type);
      reported.set(nodeId, types);
      await agent(nodeId).client.reportCondition(type, status, reason);
    },
    remediation(behaviour, nodeId) {
      if (nodeId) behaviours.set(nodeId, behaviour);
      else defaultBehaviour = behaviour;
    },
    stop: (nodeId) => agent(nodeId).session.goodbye(),
    pause: (nodeId) => agent(nodeId).session.pause(),
    resume: (nodeId) => agent(nodeId).session.start(),
    onCommand: (kind, handler) => void handlers.on(kind, handler),
    actionOutcomes(told, nodeId) {
      if (nodeId) outcomes.set(nodeId, told);
      else defaultOutcomes = told;
    },
    async close({ goodbye = false } = {}) {
      closing.abort();
      await Promise.all(
        agents.map(async (a) => {
          if (goodbye && a.session.state === 'running') await a.session.goodbye().catch(() => {});
          else await a.session.stop();
        }),
      );
      connections.close();
    },
  };
}

function plannedMachines(options: SimulatorOptions): SimulatedMachine[] {
  const count = options.count ?? 1;
  const prefix = options.hostnamePrefix ?? 'sim';
  const width = Math.max(4, String(count).length);
  return Array.from({ length: count }, (_, i) => ({
    hostname: `${prefix}-${String(i + 1).padStart(width, '0')}`,
  }));
}
