import { defineCommand, type Command } from '../command';
import { nodeName, type Node } from '../views/nodes';
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
    const node = await api.POST('/v1/nodes/{id}/approve', {
      params: { path: { id: args.NODE } },
      body: { poolId: flags.pool, version: flags['if-version'] },
    });
    out.result(
      node,
      () =>
        `${nodeName(node)}: approved into pool ${node.poolId ?? '-'}, ${node.provisionState}, version ${node.version}`,
    );
  },
});

/** reject and unblock: one POST with the version it must be at, the node back. */
function versionedCommand(verb: 'reject' | 'unblock', summary: string, after: (node: Node) => string) {
  return defineCommand({
    words: ['nodes', verb],
    summary,
    operands: NODE,
    flags: { 'if-version': ifVersionFlag },
    async run({ api, out, args, flags }) {
      const node = await api.POST(`/v1/nodes/{id}/${verb}`, {
        params: { path: { id: args.NODE } },
        body: { version: flags['if-version'] },
      });
      out.result(node, () => `${nodeName(node)}: ${after(node)}, version ${node.version}`);
    },
  });
}

const reject = versionedCommand('reject', 'Turn a pending node away for good', (node) => node.provisionState);

const block = defineCommand({
  words: ['nodes', 'block'],
  summary: 'Block a node: its agent is cut off and refused, it leaves placement; allocations stay',
  operands: NODE,
  flags: { reason: { ...reasonFlag, required: true }, 'if-version': ifVersionFlag },
  async run({ api, out, args, flags }) {
    const node = await api.POST('/v1/nodes/{id}/block', {
      params: { path: { id: args.NODE } },
      body: { reason: flags.reason, version: flags['if-version'] },
    });
    out.result(node, () => `${nodeName(node)}: access ${node.access}, version ${node.version}`);
  },
});

const unblock = versionedCommand(
  'unblock',
  'Allow a blocked node again; its agent gets back in on its next retry',
  (node) => `access ${node.access}`,
);

const revokeIdentity = defineCommand({
  words: ['nodes', 'revoke-identity'],
  summary: "Revoke a node's certificates and credentials; the machine must join again",
  operands: NODE,
  flags: {
    reason: { ...reasonFlag, help: 'why (≤ 256 characters; default: identity revoked)' },
    'if-version': ifVersionFlag,
  },
  async run({ api, out, args, flags }) {
    const result = await api.POST('/v1/nodes/{id}/revoke-identity', {
      params: { path: { id: args.NODE } },
      body: { reason: flags.reason, version: flags['if-version'] },
    });
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
