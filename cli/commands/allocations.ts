import { defineCommand, type Command } from '../command';
import { printListing, pagingFlags } from '../paging';
import { allocationsTable } from '../views/allocations';
import { nodeFlag, slugFlag } from './flags';

const list = defineCommand({
  words: ['allocations', 'list'],
  summary: 'List allocations, oldest first, one page unless --all; --node N --live: what blocks its drain',
  operands: [],
  flags: {
    node: nodeFlag('only allocations on NODE'),
    tenant: slugFlag('T', 'only allocations of tenant T (a tenant key sees only its own)'),
    live: { type: 'boolean', help: 'only live ones: not released and not past their end' },
    ...pagingFlags('allocations', 50),
  },
  async run({ api, out, flags }) {
    const query = {
      nodeId: flags.node,
      tenantId: flags.tenant,
      live: flags.live ? ('true' as const) : undefined,
      limit: flags.limit,
    };
    await printListing(out, {
      noun: 'allocations',
      all: flags.all,
      fetch: (cursor) => api.GET('/v1/allocations', { params: { query: { ...query, cursor } } }),
      render: allocationsTable,
    });
  },
});

export const allocationCommands: Command[] = [list];
