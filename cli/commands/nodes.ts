import { ACCESS, LIVENESS, PROVISION_STATES } from '../../domain/node';
import type { Query } from '@drydock/client';
import type { ApiClient } from '../client';
import { defineCommand, type Command } from '../command';
import { FOLLOW_WAIT_S } from './events';
import { EVENT_HEADER, eventLine, nodeDetails, nodeName, nodesTable, type NodeEvent } from '../views/nodes';
import { printListing, pagingFlags } from '../paging';
import { reportFinished, waitForOperation } from '../wait';
import {
  deadlineFlag,
  idempotencyKeyFlag,
  mutationFlags,
  selectorFlag,
  slugFlag,
  timeoutFlag,
  waitFlag,
} from './flags';

const NODE = [{ name: 'NODE', type: 'node' }] as const;

const list = defineCommand({
  words: ['nodes', 'list'],
  summary: 'List nodes, one page unless --all',
  operands: [],
  flags: {
    tenant: slugFlag('T', 'only nodes of tenant T'),
    pool: slugFlag('P', 'only nodes in pool P'),
    site: slugFlag('S', 'only nodes at site S'),
    state: {
      type: 'string',
      value: 'S',
      choices: PROVISION_STATES,
      help: 'only nodes in provision state S; --state pending lists nodes awaiting nodes approve|reject',
    },
    cordoned: { type: 'boolean', help: 'only cordoned nodes' },
    liveness: { type: 'string', value: 'L', choices: LIVENESS, help: 'only nodes with liveness L' },
    access: { type: 'string', value: 'A', choices: ACCESS, help: 'only nodes with access A' },
    hostname: {
      type: 'string',
      value: 'TEXT',
      pattern: /^[A-Za-z0-9._-]{1,253}$/,
      patternHint: '1–253 of letters, digits and . _ -',
      help: 'only nodes whose hostname contains TEXT, in any case',
    },
    selector: selectorFlag('only nodes carrying all of these labels, e.g. rack=b7,gpu.model=H100'),
    'include-deleted': { type: 'boolean', help: 'also deleted nodes, shown as deleted (operator keys only)' },
    ...pagingFlags('nodes', 50),
  },
  async run({ api, out, flags }) {
    type Filter = Query<'get', '/v1/nodes'>;
    const query: Filter = {
      tenantId: flags.tenant,
      poolId: flags.pool,
      siteId: flags.site,
      // The flags take only the choices the API lists.
      provisionState: flags.state as Filter['provisionState'],
      cordoned: flags.cordoned ? 'true' : undefined,
      liveness: flags.liveness as Filter['liveness'],
      access: flags.access as Filter['access'],
      hostname: flags.hostname,
      selector: flags.selector,
      includeDeleted: flags['include-deleted'] ? 'true' : undefined,
      limit: flags.limit,
    };
    await printListing(out, {
      noun: 'nodes',
      all: flags.all,
      fetch: (cursor) => api.GET('/v1/nodes', { params: { query: { ...query, cursor } } }),
      render: nodesTable,
    });
  },
});

const show = defineCommand({
  words: ['nodes', 'show'],
  summary: 'Show a node with its labels and conditions',
  operands: NODE,
  flags: {},
  async run({ api, out, args }) {
    const node = await api.GET('/v1/nodes/{id}', { params: { path: { id: args.NODE } } });
    out.result(node, () => nodeDetails(node));
  },
});

const events = defineCommand({
  words: ['nodes', 'events'],
  summary: "A node's events, oldest first (--json --follow prints one JSON event per line)",
  operands: NODE,
  flags: {
    type: {
      type: 'string',
      value: 'PREFIX',
      pattern: /^[a-z][a-z0-9.-]{0,99}$/,
      patternHint: 'an event type prefix such as node. or node.drained',
      help: 'only events whose type starts with PREFIX (node., security.), or with one of several: node.,security.',
    },
    follow: {
      type: 'boolean',
      help: 'keep printing new events as they commit, until Ctrl-C',
    },
  },
  async run({ api, out, args, flags }) {
    if (!flags.follow) {
      const all = await allEvents(api, args.NODE, flags.type);
      out.result({ items: all, nextCursor: null }, () =>
        all.length === 0 ? 'no events' : [EVENT_HEADER, ...all.map(eventLine)].join('\n'),
      );
      return;
    }
    // An unknown node (or one out of the key's sight) is an error, not a feed that stays quiet.
    await api.GET('/v1/nodes/{id}', { params: { path: { id: args.NODE } } });
    out.human(EVENT_HEADER);
    // The fleet feed of this node: every event so far, then each new one as it commits (the
    // server holds each request up to FOLLOW_WAIT_S until there is one).
    for (let after = '0'; ;) {
      const page = await api.GET('/v1/events', {
        params: { query: { after, nodeId: args.NODE, type: flags.type, limit: 200, wait: FOLLOW_WAIT_S } },
      });
      for (const event of page.items) out.line(event, () => eventLine(event));
      after = page.nextCursor;
    }
  },
});

/** All of a node's events, page by page, oldest first. */
async function allEvents(api: ApiClient, nodeId: string, type: string | undefined): Promise<NodeEvent[]> {
  const all: NodeEvent[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.GET('/v1/nodes/{id}/events', {
      params: { path: { id: nodeId }, query: { type, limit: 200, cursor } },
    });
    all.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return all;
}

/** cordon and uncordon: one POST, the node back. */
function controlCommand(verb: 'cordon' | 'uncordon', summary: string): Command {
  return defineCommand({
    words: ['nodes', verb],
    summary,
    operands: NODE,
    flags: mutationFlags,
    async run({ api, out, args, flags }) {
      const node = await api.POST(`/v1/nodes/{id}/${verb}`, {
        params: { path: { id: args.NODE } },
        body: { reason: flags.reason, version: flags['if-version'] },
      });
      out.result(node, () => `${nodeName(node)}: ${verb}ed, version ${node.version}`);
    },
  });
}

const drain = defineCommand({
  words: ['nodes', 'drain'],
  summary: 'Cordon a node and wait for its allocations to end',
  operands: NODE,
  flags: {
    ...mutationFlags,
    'idempotency-key': idempotencyKeyFlag,
    deadline: deadlineFlag(
      "when allocations still live are released by force, within the pool's disruption budget " +
        '(maxUnavailable): a duration from now (2h, 90m; 0s = now) or an RFC 3339 time, at most 30 days ' +
        'ahead; without it the drain only waits',
    ),
    wait: waitFlag,
    timeout: timeoutFlag,
  },
  async run({ api, out, args, flags }) {
    const key = flags['idempotency-key'];
    const started = await api.POST('/v1/nodes/{id}/drain', {
      params: { path: { id: args.NODE }, header: { 'idempotency-key': key } },
      body: { reason: flags.reason, version: flags['if-version'], deadline: flags.deadline },
    });
    const { node, operation } = started;
    if (!flags.wait) {
      out.result(started, () => `${nodeName(node)}: drain ${operation.id} ${operation.status}`);
      return;
    }
    if (!out.json) out.note(`${nodeName(node)}: drain ${operation.id} ${operation.status}; waiting`);
    return reportFinished(out, await waitForOperation(api, out, operation, flags.timeout));
  },
});

export const nodeCommands: Command[] = [
  list,
  show,
  events,
  controlCommand('cordon', 'Stop new placement on a node'),
  controlCommand('uncordon', 'Allow placement again; ends a drain in progress'),
  drain,
];
