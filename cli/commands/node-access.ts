import { defineCommand, type Command } from '../command';
import { nodeName, type Node } from '../views';
import { ifVersionFlag, reasonFlag, slugFlag } from './flags';

/**
 * Who may be a node and talk to the API (docs/lifecycle/enrollment.md): approve or reject a node that joined
 * without a token, block and unblock its agent, revoke its identity.
 */

const NODE = [{ name: 'NODE', type: 'node' }] as const;

const approve = defineCommand({
  words: ['nodes', 'approve'],
  summary: 'Let a pending node in (see nodes list --state pending); acceptance then adopts it',
  operands: NODE,
  flags: {
    pool: slugFlag('P', 'the pool it joins (default: the pool it asked for when it joined)'),
    'if-version': ifVersionFlag,
  },
  async run({ api, out, args, flags }) {
    const node = await api.post<Node>(`/v1/nodes/${args.NODE}/approve`, {
      poolId: flags.pool,
      version: flags['if-version'],
    });
    out.result(
      node,
      () =>
        `${nodeName(node)}: approved into pool ${node.poolId ?? '-'}, ${node.provisionState}, version ${node.version}`,
    );
  },
});

const reject = defineCommand({
  words: ['nodes', 'reject'],
  summary: 'Turn a pending node away for good',
  operands: NODE,
  flags: { 'if-version': ifVersionFlag },
  async run({ api, out, args, flags }) {
    const node = await api.post<Node>(`/v1/nodes/${args.NODE}/reject`, { version: flags['if-version'] });
    out.result(node, () => `${nodeName(node)}: ${node.provisionState}, version ${node.version}`);
  },
});

const block = defineCommand({
  words: ['nodes', 'block'],
  summary: 'Block a node: its agent is cut off and refused, it leaves placement; allocations stay',
  operands: NODE,
  flags: { reason: { ...reasonFlag, required: true }, 'if-version': ifVersionFlag },
  async run({ api, out, args, flags }) {
    const node = await api.post<Node>(`/v1/nodes/${args.NODE}/block`, {
      reason: flags.reason,
      version: flags['if-version'],
    });
    out.result(node, () => `${nodeName(node)}: access ${node.access}, version ${node.version}`);
  },
});

const unblock = defineCommand({
  words: ['nodes', 'unblock'],
  summary: 'Allow a blocked node again; its agent gets back in on its next retry',
  operands: NODE,
  flags: { 'if-version': ifVersionFlag },
  async run({ api, out, args, flags }) {
    const node = await api.post<Node>(`/v1/nodes/${args.NODE}/unblock`, { version: flags['if-version'] });
    out.result(node, () => `${nodeName(node)}: access ${node.access}, version ${node.version}`);
  },
});

const revokeIdentity = defineCommand({
  words: ['nodes', 'revoke-identity'],
  summary: "Revoke a node's certificates and credentials; the machine must join again",
  operands: NODE,
  flags: {
    reason: { ...reasonFlag, help: 'why (≤ 256 characters; default: identity revoked)' },
    'if-version': ifVersionFlag,
  },
  async run({ api, out, args, flags }) {
    const result = await api.post<{ node: Node; revokedCertificates: number }>(
      `/v1/nodes/${args.NODE}/revoke-identity`,
      { reason: flags.reason, version: flags['if-version'] },
    );
    const { node, revokedCertificates: n } = result;
    out.result(
      result,
      () =>
        `${nodeName(node)}: identity revoked, ${n} certificate${n === 1 ? '' : 's'} revoked, ` +
        `identity generation ${node.identityGeneration}, version ${node.version}`,
    );
  },
});

export const nodeAccessCommands: Command[] = [approve, reject, block, unblock, revokeIdentity];
