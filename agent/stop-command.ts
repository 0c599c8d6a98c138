import { resolve } from 'node:path';
import { baseUrl } from '../cli-kit/flags';
import { ApiError } from '@drydock/client';
import { AgentClient } from './client';
import { Connections } from './connections';
import { defineWordCommand } from '../cli-kit/word-command';
import { dataDirFlag, joinedApiFlag } from './command';
import { AgentError, IdentityInvalid } from './errors';
import { dataFiles, requireIdentity } from './identity';
import { runningAgent, waitForExit } from './pid-file';

/** How long `stop` waits for a running agent to finish its last call and exit. */
const STOP_WAIT_MS = 15_000;

/** `drydock-agent stop`: the running agent ends, and the node says goodbye (it goes offline). */
export const stopCommand = defineWordCommand({
  words: ['stop'],
  summary: 'stop the running agent and say goodbye (the node goes offline)',
  operands: [],
  flags: { 'data-dir': dataDirFlag, api: joinedApiFlag },
  async run({ flags, io, json }) {
    const dataDir = resolve(flags['data-dir']);
    const identity = requireIdentity(dataDir);
    // The running agent goes first: a heartbeat of its landing after the goodbye would connect the
    // node again.
    const pid = runningAgent(dataFiles(dataDir).pid);
    if (pid !== null) {
      process.kill(pid, 'SIGTERM');
      if (!(await waitForExit(pid, STOP_WAIT_MS))) {
        process.kill(pid, 'SIGKILL');
        await waitForExit(pid, 2_000);
      }
    }
    const connections = new Connections();
    const api = flags.api === undefined ? identity.api : baseUrl(flags.api);
    try {
      await new AgentClient(api, identity.credential, connections).heartbeat('offline');
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) throw new IdentityInvalid(error.message);
      if (error instanceof ApiError && error.status === 403) {
        throw new AgentError(`the control plane refuses this node's goodbye: ${error.message}`);
      }
      throw error;
    } finally {
      connections.close();
    }
    io.stdout(
      json
        ? `${JSON.stringify({ nodeId: identity.nodeId, state: 'offline', stoppedPid: pid })}\n`
        : 'offline\n',
    );
    return 0;
  },
});
