import { DURATION_PATTERN } from '../../domain/duration';
import { SLUG_PATTERN } from '../../domain/ids';
import { stepText } from '../../domain/maintenance';
import { progressInWords } from '../../domain/progress';
import { defineCommand, type Command, type FlagSpec } from '../command';
import { CliError, UsageError } from '../errors';
import { capacityTable, poolDetails, poolDrainSummary, poolsTable } from '../views/pools';
import { reportFinished, waitForOperation } from '../wait';
import { stepFlag, stepsOf } from './maintenance';
import {
  deadlineFlag,
  idempotencyKeyFlag,
  ifVersionFlag,
  reasonFlag,
  selectorFlag,
  timeoutFlag,
  waitFlag,
} from './flags';

const POOL = [{ name: 'POOL', type: 'pool' }] as const;

const list = defineCommand({
  words: ['pools', 'list'],
  summary: 'List the pools the caller can see',
  operands: [],
  flags: {},
  async run({ api, out }) {
    const pools = await api.GET('/v1/pools');
    if (!out.json && pools.items.length === 0) {
      out.note('no pools');
      return;
    }
    out.result(pools, () => poolsTable(pools.items));
  },
});

const show = defineCommand({
  words: ['pools', 'show'],
  summary: 'Show a pool with its grants and policy',
  operands: POOL,
  flags: {},
  async run({ api, out, args }) {
    const pool = await api.GET('/v1/pools/{id}', { params: { path: { id: args.POOL } } });
    out.result(pool, () => poolDetails(pool));
  },
});

const capacity = defineCommand({
  words: ['pools', 'capacity'],
  summary: "A pool's live nodes per capacity bucket (maintenance, unreachable, …, schedulable)",
  operands: POOL,
  flags: {},
  async run({ api, out, args }) {
    const counts = await api.GET('/v1/pools/{id}/capacity', { params: { path: { id: args.POOL } } });
    out.result(counts, () => capacityTable(counts));
  },
});

/** A policy limit: a count (`2`) or a percent (`25%`), as the API takes it. */
const limitFlag = (help: string) =>
  ({
    type: 'string',
    value: 'N|P%',
    pattern: /^(?:100000|\d{1,5}|(?:100|[1-9]?\d)%)$/,
    patternHint: 'a count from 0 to 100000 such as 2, or a percent such as 25%',
    help,
  }) as const satisfies FlagSpec;

/** Tenants, one or more times (`--grant a --grant b`, or `--grant a,b`). */
const tenantsFlag = (help: string) =>
  ({
    type: 'list',
    value: 'TENANT',
    maxItems: 64,
    repeatable: true,
    help,
    checkItem: (tenant) =>
      SLUG_PATTERN.test(tenant) ? undefined : 'is not a tenant id: 1–63 of a-z 0-9 -, starting with a letter',
  }) as const satisfies FlagSpec;

/** The flags that set a policy field, by the field's name in the API. */
const POLICY_FLAGS = {
  'max-unavailable': 'maxUnavailable',
  'max-unhealthy': 'maxUnhealthy',
  'lost-after': 'lostAfter',
  remediation: 'remediation',
} as const;
type PolicyFlag = keyof typeof POLICY_FLAGS;
const isPolicyFlag = (name: string): name is PolicyFlag => Object.hasOwn(POLICY_FLAGS, name);

/** A JSON object, as `--remediation` takes it. */
function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

const update = defineCommand({
  words: ['pools', 'update'],
  summary: "Change a pool's grants and policy (operator); what is not named stays as it is",
  operands: POOL,
  flags: {
    'max-unavailable': limitFlag('the disruption budget: nodes out at once for drains'),
    'max-unhealthy': limitFlag('the storm limit: nodes unhealthy or in remediation at once'),
    'lost-after': {
      type: 'string',
      value: 'DURATION',
      pattern: DURATION_PATTERN,
      patternHint: 'a duration such as 10m',
      help: 'how long an unreachable node stays before it is lost (more than 0, at most 30d)',
    },
    remediation: {
      type: 'string',
      value: 'JSON',
      maxLength: 16_384,
      accepts: isJsonObject,
      patternHint: 'a JSON object such as {"GpuXidError":{"ladder":["reboot"]}}',
      help:
        'remediation per condition type, merged into the policy: a type or field given is set, null ' +
        'removes it, e.g. {"GpuXidError":{"attemptTimeout":"5m"},"NicFlap":null}',
    },
    reset: {
      type: 'list',
      value: 'FIELD,…',
      maxItems: 4,
      help: `policy fields back to their default: ${Object.keys(POLICY_FLAGS).join(', ')}`,
      checkItem: (field) =>
        isPolicyFlag(field) ? undefined : `is not a policy field: ${Object.keys(POLICY_FLAGS).join(', ')}`,
    },
    grant: tenantsFlag('grant the pool to this tenant too'),
    'revoke-grant': tenantsFlag('take the grant back from this tenant'),
    'if-version': { ...ifVersionFlag, help: 'refuse with CONFLICT unless the pool is still at version N' },
    reason: reasonFlag,
  },
  check({ flags }) {
    const set = Object.keys(POLICY_FLAGS).filter((name) => flags[name as PolicyFlag] !== undefined);
    if (set.length === 0 && !flags.reset && !flags.grant && !flags['revoke-grant']) {
      throw new UsageError(
        'give what to change: --max-unavailable, --max-unhealthy, --lost-after, --remediation, --reset, --grant or --revoke-grant',
      );
    }
    const both = (flags.reset ?? []).filter((field) => set.includes(field));
    if (both.length > 0) throw new UsageError(`--${both[0]} and --reset ${both[0]} at once`);
    const granted = (flags['revoke-grant'] ?? []).filter((t) => flags.grant?.includes(t));
    if (granted.length > 0) throw new UsageError(`--grant and --revoke-grant name ${granted.join(', ')}`);
  },
  async run({ api, out, args, flags }) {
    const policy: Record<string, unknown> = {};
    for (const field of flags.reset ?? []) if (isPolicyFlag(field)) policy[POLICY_FLAGS[field]] = null;
    const limit = (value: string) => (value.endsWith('%') ? value : Number(value));
    if (flags['max-unavailable'] !== undefined) policy.maxUnavailable = limit(flags['max-unavailable']);
    if (flags['max-unhealthy'] !== undefined) policy.maxUnhealthy = limit(flags['max-unhealthy']);
    if (flags['lost-after'] !== undefined) policy.lostAfter = flags['lost-after'];
    if (flags.remediation !== undefined) policy.remediation = JSON.parse(flags.remediation);
    let version = flags['if-version'];
    let grants: string[] | undefined;
    if (flags.grant || flags['revoke-grant']) {
      // The API takes the whole list: computed from the pool as read, and sent at the version read,
      // so a grant changed meanwhile is a CONFLICT rather than lost.
      const pool = await api.GET('/v1/pools/{id}', { params: { path: { id: args.POOL } } });
      version ??= pool.version;
      const revoked = flags['revoke-grant'] ?? [];
      const added = (flags.grant ?? []).filter((t) => !pool.grants.includes(t));
      grants = [...pool.grants.filter((t) => !revoked.includes(t)), ...added];
    }
    const pool = await api.PATCH('/v1/pools/{id}', {
      params: {
        path: { id: args.POOL },
        header: version === undefined ? {} : { 'if-match': String(version) },
      },
      body: {
        ...(grants ? { grants } : {}),
        ...(Object.keys(policy).length > 0 ? { policy } : {}),
        reason: flags.reason,
      },
    });
    out.result(pool, () => poolDetails(pool));
  },
});

const drain = defineCommand({
  words: ['pools', 'drain'],
  summary: 'Drain the nodes of a pool that match a label selector, at most N at a time',
  operands: POOL,
  flags: {
    selector: selectorFlag(
      'only the nodes carrying all of these labels, e.g. rack=b7,gpu.model=H100',
      'every node of the pool',
    ),
    'max-concurrent': {
      type: 'integer',
      value: 'N',
      min: 1,
      max: 1000,
      default: '1',
      help: 'node drains running at once (1–1000)',
    },
    deadline: deadlineFlag(
      'when a node drain force-releases what still runs: a time (the same for every node) or a ' +
        'duration (counted from each node’s own drain start)',
    ),
    reason: { ...reasonFlag, required: true },
    'idempotency-key': idempotencyKeyFlag,
    wait: {
      ...waitFlag,
      help: 'block until every node drain ended, showing the counts; exit 1 unless every node drained',
    },
    timeout: timeoutFlag,
  },
  async run({ api, out, args, flags }) {
    const { operation } = await api.POST('/v1/pools/{id}/drain', {
      params: { path: { id: args.POOL }, header: { 'idempotency-key': flags['idempotency-key'] } },
      body: {
        selector: flags.selector,
        maxConcurrent: flags['max-concurrent'],
        deadline: flags.deadline,
        reason: flags.reason,
      },
    });
    const selected = Array.isArray(operation.result?.nodeIds) ? operation.result.nodeIds.length : 0;
    const begun = `pool ${args.POOL}: pool-drain ${operation.id} ${operation.status}, ${selected} node${selected === 1 ? '' : 's'}`;
    if (!flags.wait) {
      out.result({ operation }, () => begun);
      return;
    }
    if (!out.json) out.note(`${begun}; waiting`);
    const done = await waitForOperation(api, out, operation, flags.timeout, undefined, true);
    out.human(poolDrainSummary(done));
    return reportFinished(out, done);
  },
});

const maintain = defineCommand({
  words: ['pools', 'maintain'],
  summary: 'A rolling maintenance: the plan on each selected node, at most N at once, pausing at M failed',
  operands: POOL,
  flags: {
    selector: selectorFlag(
      'only the nodes carrying all of these labels, e.g. rack=b7',
      'every node of the pool',
    ),
    step: stepFlag,
    'max-concurrent': {
      type: 'integer',
      value: 'N',
      min: 1,
      max: 1000,
      default: '1',
      help: 'node maintenances running at once (1–1000)',
    },
    'max-failures': {
      type: 'integer',
      value: 'M',
      min: 1,
      max: 1000,
      default: '1',
      help: 'failed node maintenances that pause it (drydock operations resume OP goes on)',
    },
    'healthy-after': {
      type: 'duration',
      value: 'DURATION',
      help: 'how long every probe must hold healthy to verify (default 60s)',
    },
    reason: { ...reasonFlag, required: true },
    'idempotency-key': idempotencyKeyFlag,
    wait: {
      ...waitFlag,
      help: 'block until every node maintenance ended, showing the counts; exit 1 unless every node was maintained',
    },
    timeout: timeoutFlag,
  },
  async run({ api, out, args, flags }) {
    const steps = stepsOf(flags.step);
    const healthy = flags['healthy-after'];
    const { operation } = await api.POST('/v1/pools/{id}/maintenance', {
      params: { path: { id: args.POOL }, header: { 'idempotency-key': flags['idempotency-key'] } },
      body: {
        selector: flags.selector,
        steps,
        maxConcurrent: flags['max-concurrent'],
        maxFailures: flags['max-failures'],
        reason: flags.reason,
        ...(healthy === undefined ? {} : { healthyAfter: `${Math.round(healthy / 1000)}s` }),
      },
    });
    const selected = Array.isArray(operation.result?.nodeIds) ? operation.result.nodeIds.length : 0;
    const begun =
      `pool ${args.POOL}: rolling maintenance ${operation.id} (${steps.map(stepText).join(' → ')}) ` +
      `${operation.status}, ${selected} node${selected === 1 ? '' : 's'}`;
    if (!flags.wait) return void out.result({ operation }, () => begun);
    if (!out.json) out.note(`${begun}; waiting`);
    // A pause is where a person decides: the wait ends there, saying how to go on.
    const done = await waitForOperation(
      api,
      out,
      operation,
      flags.timeout,
      (op) => op.progress.phase === 'paused',
      true,
    );
    if (done.progress.phase === 'paused') {
      out.result(done, () => progressInWords(done.progress));
      throw new CliError(
        'PAUSED',
        `rolling maintenance ${done.id} paused at its --max-failures; look at the failed nodes ` +
          `(drydock operations show ${done.id}), then resume it (drydock operations resume ${done.id}) ` +
          `or stop it (drydock operations cancel ${done.id} --children cancel)`,
        1,
      );
    }
    return reportFinished(out, done);
  },
});

export const poolCommands: Command[] = [list, show, capacity, update, drain, maintain];
