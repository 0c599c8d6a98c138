import { resolve } from 'node:path';
import { hostname as machineHostname } from 'node:os';
import { baseUrl, slugFlag, urlFlag } from '../cli-kit/flags';
import { AgentClient } from './client';
import { Connections } from './connections';
import { defineWordCommand } from '../cli-kit/word-command';
import { dataDirFlag } from './command';
import { AgentError, UsageError } from './errors';
import { dataFiles, moveAside, prepareDataDir, readIdentity } from './identity';
import { EMPTY_INVENTORY, readInventoryFile } from './inventory';
import { joinCluster } from './join';
import { runningAgent } from './pid-file';

/** `drydock-agent join`: this machine becomes a node, adopted with a token or pending without. */
export const joinCommand = defineWordCommand({
  words: ['join'],
  summary: 'join the cluster as a new node (with a token: adopted; without: waits for approval)',
  operands: [],
  flags: {
    api: { ...urlFlag('the Drydock API'), required: true },
    token: { type: 'string', value: 'SECRET', help: 'a join token', env: 'DRYDOCK_JOIN_TOKEN' },
    'data-dir': dataDirFlag,
    hostname: { type: 'string', value: 'H', help: "the node's hostname", default: "this machine's" },
    'display-name': { type: 'string', value: 'D', help: 'a name for people' },
    pool: slugFlag('P', 'the pool to ask for when joining without a token'),
    inventory: { type: 'string', value: 'FILE', help: 'JSON { accelerators: [...], storageRoots: [...] }' },
    reset: { type: 'boolean', help: 'move the old identity and journal aside and join as a new node' },
    yes: { type: 'boolean', help: 'confirm --reset' },
  },
  check({ flags }) {
    if (flags.reset && !flags.yes) {
      throw new UsageError(
        '--reset makes this machine a new node and orphans the old one; add --yes to confirm',
      );
    }
  },
  async run({ flags, io, json }) {
    const dataDir = resolve(flags['data-dir']);
    const inventory = flags.inventory ? readInventoryFile(flags.inventory) : EMPTY_INVENTORY;
    prepareDataDir(dataDir);
    if (flags.reset) {
      const pid = runningAgent(dataFiles(dataDir).pid);
      if (pid !== null)
        throw new AgentError(`an agent runs for this data directory (pid ${pid}); stop it first`);
      for (const moved of moveAside(dataDir)) io.stderr(`moved aside: ${moved}\n`);
    } else {
      const existing = readIdentity(dataDir);
      if (existing) {
        io.stdout(
          json
            ? `${JSON.stringify({ nodeId: existing.nodeId, alreadyJoined: true })}\n`
            : `already joined as ${existing.nodeId}\n`,
        );
        return 0;
      }
    }
    const connections = new Connections();
    try {
      const { identity, provisionState } = await joinCluster(
        new AgentClient(baseUrl(flags.api), undefined, connections),
        {
          token: flags.token,
          hostname: flags.hostname ?? machineHostname(),
          displayName: flags['display-name'],
          poolId: flags.pool,
          inventory,
        },
        dataDir,
      );
      if (json) {
        const { nodeId, clusterId } = identity;
        io.stdout(`${JSON.stringify({ nodeId, provisionState, clusterId, dataDir })}\n`);
      } else {
        io.stdout(`joined as ${identity.nodeId} (${provisionState})\n`);
        if (provisionState === 'pending') {
          io.stdout(`waiting for an operator's approval: drydock nodes approve ${identity.nodeId}\n`);
        }
      }
      return 0;
    } finally {
      connections.close();
    }
  },
});
