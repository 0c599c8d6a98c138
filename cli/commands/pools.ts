import { defineCommand, type Command } from '../command';
import { capacityTable, poolDetails, poolDrainSummary, poolsTable } from '../views/pools';
import { reportFinished, waitForOperation } from '../wait';
import { deadlineFlag, idempotencyKeyFlag, reasonFlag, selectorFlag, timeoutFlag, waitFlag } from './flags';

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

export const poolCommands: Command[] = [list, show, capacity, drain];
