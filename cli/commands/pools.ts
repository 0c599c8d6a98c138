import { defineCommand, type Command } from '../command';
import { capacityTable, poolDetails, poolsTable } from '../views/pools';

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

export const poolCommands: Command[] = [list, show, capacity];
