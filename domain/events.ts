import type { AcceptanceCheck } from './acceptance';
import type { Connectivity, Liveness } from './node';
import type { EndingAction } from './observed';
import type { OperationKind } from './operation';
import type { PoolSettings } from './pool';
import type { AttemptRecord, Storm } from './remediation';
import type { SchedulerReport } from './scheduler-view';

/** The `data` of an event that carries none. */
type NoData = Record<string, never>;

/** What every `node.command.*` event says: the command, its action, and who asked for it. */
type CommandEventData = {
  commandId: string;
  action: string;
  requestedBy: string;
};

/** What every `security.node.ssh-certificate-*` event says: which certificate, and until when it was valid. */
type SshCertificateEventData = {
  serial: number;
  principal: string;
  keyId: string;
  validAfter: string;
  validBefore: string;
};

/**
 * What a pool change changed, as a JSON merge patch of the pool's grants and policy (RFC 7396):
 * only what changed, `null` for a policy field that was (or became) not set.
 */
export type PoolSettingsPatch = {
  grants?: PoolSettings['grants'];
  policy?: Record<string, unknown>;
};

/**
 * Every event Drydock writes, by type, with the shape of its `data`. The events table is the audit
 * log and the feed (docs/api.md); a new event type is added here first, with its line in
 * `EVENT_DESCRIPTIONS`.
 */
export interface EventPayloads {
  'node.cordoned': NoData;
  'node.uncordoned': { endedDrain: boolean };
  'node.tainted': { added: string[]; removed: string[] };
  'node.labeled': { set: Record<string, string>; removed: string[] };
  'node.maintenance.cleared': NoData;
  'node.blocked': NoData;
  'node.unblocked': NoData;
  'security.node.identity-revoked': { revokedCertificates: number; identityGeneration: number };
  /** A break-glass SSH certificate for the node (docs/security.md#break-glass-ssh); `reason` says why. */
  'security.node.ssh-certificate-issued': SshCertificateEventData & { publicKeyFingerprint: string };
  'security.node.ssh-certificate-revoked': SshCertificateEventData;
  'security.node.duplicate-session': {
    sessionId: string;
    otherSessionId: string;
    alternations: number;
    windowSeconds: number;
  };
  'security.node.quarantined': {
    sessionIds: string[];
    alternations: number;
    revokedCredentials: number;
    identityGeneration: number;
  };

  'node.adopting': { joinToken?: string; hostname?: string };
  'node.adopted': NoData;
  /** Acceptance runs the pool's acceptance action on the node (docs/lifecycle/enrollment.md#acceptance). */
  'node.acceptance.started': { commandId: string; action: string };
  /** A check of acceptance failed: the node stays `adopting` with `acceptance:<check>`. */
  'node.acceptance.failed': { check: AcceptanceCheck; reason: string; commandId?: string };
  /** The agent's discovery reported another inventory: its rows and `inventory` labels follow. */
  'node.inventory.changed': {
    set: Record<string, string>;
    removed: string[];
    accelerators: number;
    storageRoots: number;
  };
  'node.approved': { poolId: string };
  'node.rejected': NoData;
  'node.deleted': NoData;

  'node.connected': { was: { connectivity: Connectivity; liveness: Liveness } };
  'node.disconnected': { reason: 'goodbye' | 'no-session' };
  'node.unreachable': { lastSeenAt: string | null };
  'node.lost': NoData;

  /** `deadline`: when what is still live is released by force (null: the drain only waits). */
  'node.draining': { deadline: string | null };
  'node.drained': NoData;
  'node.drain.cancelled': NoData;
  'node.drain.failed': { code: string; step: string };
  /**
   * Recorded on the node, with the allocation's tenant as the event's tenant; `deadline` is the
   * drain's that passed (a purge's forced release has none).
   */
  /**
   * A scheduler's bridge recorded work it placed (`source`, `externalId`); `refusals`: what
   * Drydock's placement rule would have refused it for (a cordoned node, say), recorded anyway.
   */
  'allocation.observed': {
    allocationId: string;
    tenantId: string;
    source: string;
    externalId: string;
    refusals: string[];
  };
  /**
   * A drain's deadline passed on a node holding this observed allocation: its scheduler is asked
   * to end the work (requeue or cancel); its bridge releases it once the scheduler says it is gone.
   */
  'allocation.end-requested': {
    allocationId: string;
    tenantId: string;
    source: string;
    externalId: string;
    operationId: string;
    deadline?: string;
  };
  /**
   * The bridge of an observed allocation on a draining node, or asked to end, says how its scheduler
   * ends it (`requeue`, `cancel`, `evict`, `delete`) and what the scheduler answered; it is released
   * once the scheduler says it is gone.
   */
  'allocation.ending': {
    allocationId: string;
    tenantId: string;
    source: string;
    externalId: string;
    action: EndingAction;
    answer: string;
  };
  'allocation.force-released': {
    allocationId: string;
    tenantId: string;
    operationId: string;
    deadline?: string;
  };

  'node.decommissioned': { operator?: string; nodeGeneration?: number; dependencyDigest?: string };
  /** Cancelled before its point of no return: the node is back in the state it was admitted from. */
  'node.decommission.cancelled': NoData;

  'node.purge.requested': { commandId: string };
  'node.purge.refused': { commandId: string };
  'node.purged': NoData;
  'node.purge.cancelled': { commandId: string | null; withdrawn: boolean };

  'node.operation.abandoned': { kind: OperationKind; workflowStatus: string };

  'node.remediation.attempted': { attempt: number; action: string; condition: string; commandId: string };
  /** The agent started again after a restarting action it had acked (a reboot): the machine is back. */
  'node.remediation.returned': { commandId: string; action: string; attempt?: number };
  /** Someone asked the node to run a configured action (the actor is who; docs/lifecycle/commands.md). */
  'node.command.requested': CommandEventData & { args: Record<string, string>; expiresAt: string };
  'node.command.started': CommandEventData;
  'node.command.succeeded': CommandEventData & { exitCode: number };
  'node.command.failed': CommandEventData & { exitCode: number | null; reason: string };
  'node.command.returned': CommandEventData & { reason: string };
  'node.command.refused': CommandEventData & { reason: string };
  'node.command.expired': CommandEventData;
  'node.command.cancelled': CommandEventData;
  /** A maintenance of the node was recorded (docs/lifecycle/maintenance.md): its plan's steps. */
  'node.maintenance.started': { steps: string[]; parentOperationId: string | null };
  /** One step of the node's maintenance ended: how, and what it ran (a drain, a command). */
  'node.maintenance.step-ended': {
    index: number;
    step: string;
    outcome: 'done' | 'failed';
    reason?: string;
    commandId?: string;
    operationId?: string;
  };
  'node.maintenance.succeeded': { steps: string[] };
  /** A step failed: the node is in maintenance for a person, with the reason. */
  'node.maintenance.failed': { index: number; step: string; reason: string };
  /** Cancelled: what its step was doing is withdrawn; the node stays cordoned. */
  'node.maintenance.cancelled': { index: number; step: string | null };
  /** The agent's session began on a boot other than the last it reported: the machine restarted. */
  'node.booted': { bootId: string; bootedAt: string; previousBootId: string | null };
  /** An operator recorded a condition the node had not reported (the actor is who). */
  'node.condition.reported': { type: string; reason: string | null; source: 'operator' };
  /** An operator turned a true condition false by hand (the actor is who, the reason why). */
  'node.condition.cleared': { type: string; was: { reason: string | null; since: string } };
  /**
   * A scheduler's bridge reported the node otherwise than before (`PUT /v1/nodes/{id}/schedulers/
   * {source}`): what it says now, and what it said before (null: its first report).
   */
  'node.scheduler.changed': { source: string; view: SchedulerReport; was: SchedulerReport | null };
  'node.remediation.succeeded': {
    attempts: AttemptRecord[];
    /** Other true conditions no remediation has handled yet: the next remediation takes the oldest. */
    queued?: string[];
  };
  'node.remediation.escalated': {
    reason: string;
    condition: string;
    attempts: AttemptRecord[];
    /** Present when the pool was over its `maxUnhealthy`: the counts that said so. */
    storm?: Storm;
    queued?: string[];
  };

  /**
   * The storage layer (or an operator) recorded a copy of an artifact on the node
   * (`PUT /v1/nodes/{id}/artifact-copies/{artifactId}`); `previousPath`: where the node's copy was
   * recorded before, when this moved it.
   */
  'artifact.copy.recorded': { copyId: string; artifactId: string; path: string; previousPath?: string };
  /** The node's copy of an artifact was removed (`DELETE …/artifact-copies/{artifactId}`). */
  'artifact.copy.removed': { copyId: string; artifactId: string; path: string };

  /**
   * A pool's grants or policy changed (`PATCH /v1/pools/{id}`): `after` is what was set, `before`
   * what it replaced (each a merge patch: applying `before` undoes the change). No node: only
   * operators see it.
   */
  'pool.updated': { poolId: string; version: number; before: PoolSettingsPatch; after: PoolSettingsPatch };
  /** A paused rolling maintenance was resumed: `maxFailures` counts again from its failures now. */
  'pool.maintenance.resumed': { poolId: string; failed: number };
}

export type EventType = keyof EventPayloads;

/** What each event records; also the list of event types the API documents. */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  'node.cordoned': 'the node was cordoned: no new placements',
  'node.uncordoned': 'the cordon came off (and a drain in progress ended)',
  'node.tainted': 'operator taints were added or removed',
  'node.labeled': 'operator labels were set or removed',
  'node.maintenance.cleared': 'an operator took the node out of maintenance',
  'node.blocked': 'access blocked: the node is refused all but its purge command',
  'node.unblocked': 'access allowed again',
  'security.node.identity-revoked': "the node's credentials and certificates were revoked",
  'security.node.ssh-certificate-issued':
    'a break-glass SSH certificate was issued for the node (root login, until `data.validBefore`); the actor and `reason` say who and why',
  'security.node.ssh-certificate-revoked':
    "a break-glass SSH certificate of the node was revoked: the node's agent puts its serial in sshd's KRL",
  'security.node.duplicate-session':
    "the node's heartbeats went back to an agent run seen before: one identity on two machines (a copied disk or identity file)",
  'security.node.quarantined':
    'one identity kept alternating between two agent runs: its credentials were revoked (duplicate-identity) and the node is NoSchedule quarantined',
  'node.adopting': 'the node joined, or was adopted again, and waits for acceptance',
  'node.adopted': 'acceptance passed: the node may take placements',
  'node.acceptance.started':
    "acceptance runs the pool's acceptance action on the node (`data.action`, `data.commandId`); the node stays adopting until it passes",
  'node.acceptance.failed':
    'a check of acceptance failed (`data.check`: access, liveness, conditions or action; `data.reason`): the node stays adopting, with `acceptance:<check>`, until adopted again',
  'node.inventory.changed':
    "the agent's discovery reported another inventory: accelerators, storage roots and `inventory` labels follow (`data.set`, `data.removed`)",
  'node.approved': 'an operator let a pending node in, into a pool',
  'node.rejected': 'an operator turned a pending node away',
  'node.deleted': 'the node was deleted (its row stays as a tombstone)',
  'node.connected': "the node's agent started a session",
  'node.disconnected': "the node's agent said goodbye, or its session timed out",
  'node.unreachable': 'no heartbeat within the lease',
  'node.lost': "unreachable for longer than its pool's lostAfter",
  'node.draining': 'a drain began: cordoned, waiting for its allocations to end',
  'node.drained': 'the drain finished: the node holds nothing',
  'node.drain.cancelled': 'the drain ended before it finished (`draining` was taken off)',
  'node.drain.failed': 'the drain failed for good; `draining` came off',
  'allocation.observed':
    "a scheduler's bridge recorded work the scheduler placed (`data.source`, `data.externalId`); `data.refusals`: what placement would have refused it for",
  'allocation.end-requested':
    "a drain's deadline passed: the scheduler that placed this observed allocation is asked to end it (`data.source`, `data.externalId`); it is released when the scheduler says the work is gone",
  'allocation.ending':
    'the scheduler asked to end this observed allocation answered, as its bridge says (`data.action`: requeue or cancel, `data.answer`: its words); a new answer writes another',
  'allocation.force-released':
    "the allocation was released by force: a drain's deadline passed (within the pool's disruption budget) — for observed work, once its bridge says the scheduler ended it (the actor is the bridge's key) — or a purge of its node released it (told force, or as it forgot the node)",
  'node.decommissioned': 'the node was decommissioned for good',
  'node.decommission.cancelled': 'a decommission was cancelled before its point of no return',
  'node.purge.requested': 'a signed purge command was queued for the node',
  'node.purge.refused': 'the node refused the purge command',
  'node.purged': 'the node confirmed the purge and was forgotten',
  'node.purge.cancelled':
    'the purge was cancelled: its unanswered command was withdrawn; the node stays purging',
  'node.operation.abandoned':
    "the operation's workflow closed without finishing it (terminated or timed out); it was closed failed and the node's reasons repaired",
  'node.remediation.attempted': 'a remediation action was sent to the node',
  'node.remediation.returned':
    'the agent came back after an action that restarts the machine (it acked the action before running it)',
  'node.command.requested':
    'someone asked the node to run one of its configured actions (`data.action`, `data.args`; the actor is who)',
  'node.command.started': "the node's agent started the command (`data.requestedBy`: who asked)",
  'node.command.succeeded': 'the command exited 0 (`data.exitCode`)',
  'node.command.failed':
    'the command exited otherwise than 0, timed out or could not start (`data.exitCode`, `data.reason`)',
  'node.command.returned':
    'the agent started again while the command ran (or after its action restarted the machine): it is not run again',
  'node.command.refused': "the node's agent refused the command before running it (`data.reason`)",
  'node.command.expired': 'the command was not delivered before its `expiresAt`: it will not run',
  'node.command.cancelled': 'the command was withdrawn before the node started it',
  'node.maintenance.started':
    'a maintenance of the node began (`data.steps`: its plan); the node is cordoned for its length',
  'node.maintenance.step-ended':
    "a step of the node's maintenance ended (`data.step`, `data.outcome`; `data.commandId` / `data.operationId`: what it ran)",
  'node.maintenance.succeeded': "every step of the node's maintenance is done",
  'node.maintenance.failed':
    "a step of the node's maintenance failed (`data.step`, `data.reason`): the node is in maintenance for a person",
  'node.maintenance.cancelled':
    "the node's maintenance was cancelled: its drain and unstarted commands withdrawn; the node stays cordoned",
  'node.booted':
    "the node's agent started on a new boot (`data.bootId`, `data.bootedAt`; `data.previousBootId`: the boot before)",
  'node.condition.reported': 'an operator recorded a fault condition the node had not reported',
  'node.condition.cleared':
    'an operator cleared a true condition by hand: it is false, its NoSchedule reason gone, and a remediation of it sees it cleared',
  'node.scheduler.changed':
    "a scheduler's view of the node changed (`data.source`, `data.view`, `data.was`): its state, reason, cordon, whether it marks the node down, and where it disagrees with Drydock",
  'node.remediation.succeeded': 'the condition cleared',
  'node.remediation.escalated': 'remediation gave up: the node is in maintenance',
  'artifact.copy.recorded':
    'a copy of an artifact was recorded on the node (`data.artifactId`, `data.path`; `data.previousPath` when it moved)',
  'artifact.copy.removed': "the node's copy of an artifact was removed (`data.artifactId`, `data.path`)",
  'pool.maintenance.resumed':
    'a paused rolling maintenance was resumed (`data.failed`: its failures so far; maxFailures counts again from there)',
  'pool.updated': "an operator changed a pool's grants or policy (`data.before`, `data.after`: what changed)",
};

export const EVENT_TYPES = Object.keys(EVENT_DESCRIPTIONS) as [EventType, ...EventType[]];

/**
 * One event as a change carries it: its type and its payload, which may be left out when every
 * field of it is optional. A union on `type`, so a misspelt type or a wrong payload does not compile.
 */
export type DrydockEvent = {
  [T in EventType]: Record<never, never> extends EventPayloads[T]
    ? { type: T; data?: EventPayloads[T] }
    : { type: T; data: EventPayloads[T] };
}[EventType];

export type EventOf<T extends EventType> = Extract<DrydockEvent, { type: T }>;
