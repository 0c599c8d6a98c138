import { ApiError, type Answer } from '@drydock/client';
import { MAX_LABELS } from '../../domain/labels';
import { MAX_TAINT_KEYS, TAINT_KEY } from '../../domain/taints';
import { defineCommand, type Command, type FlagSpec } from '../command';
import { CliError, UsageError } from '../errors';
import { dash } from '../output';
import { labelsTable, nodeName, taintsOf } from '../views/nodes';
import type { Operation } from '../views/operations';
import { reportFinished, waitForOperation } from '../wait';
import {
  idempotencyKeyFlag,
  labelKeyProblem,
  labelObject,
  labelPairsFlag,
  mutationFlags,
  reasonFlag,
  refuseRepeatedLabelKeys,
  timeoutFlag,
  waitFlag,
} from './flags';

/**
 * Node controls beyond cordon and drain (docs/concepts.md): taints, labels, adopt, maintenance, delete,
 * and purge (docs/lifecycle/purge.md).
 */

const NODE = [{ name: 'NODE', type: 'node' }] as const;

const TAINT_KEY_RULE =
  'a taint key is 1–128 of letters, digits and . _ / = : -, starting and ending with a letter or digit';

const taintKeysFlag = (help: string) =>
  ({
    type: 'list',
    value: 'K1,K2',
    maxItems: MAX_TAINT_KEYS,
    help: `${help} (comma-separated, at most ${MAX_TAINT_KEYS})`,
    checkItem: (key) => (TAINT_KEY.test(key) ? undefined : `is not a taint key: ${TAINT_KEY_RULE}`),
  }) as const satisfies FlagSpec;

/** Refuses keys named in both of two flags: the API would refuse them with INVALID_INPUT. */
function refuseBoth(keys: string[], others: string[], doing: string): void {
  const both = keys.filter((key) => others.includes(key));
  if (both.length > 0) throw new UsageError(`a key cannot be ${doing} at once: ${both.join(', ')}`);
}

const taint = defineCommand({
  words: ['nodes', 'taint'],
  summary: 'Add and remove operator taints (NoSchedule reasons taint:KEY)',
  operands: NODE,
  flags: {
    add: taintKeysFlag('taint keys to add, e.g. rma-pending or dedicated=acme'),
    remove: taintKeysFlag('taint keys to remove'),
    ...mutationFlags,
  },
  check({ flags }) {
    if (!flags.add && !flags.remove) throw new UsageError('give --add or --remove (or both)');
    refuseBoth(flags.add ?? [], flags.remove ?? [], 'added and removed');
  },
  async run({ api, out, args, flags }) {
    const node = await api.POST('/v1/nodes/{id}/taint', {
      params: { path: { id: args.NODE } },
      body: { add: flags.add, remove: flags.remove, reason: flags.reason, version: flags['if-version'] },
    });
    out.result(
      node,
      () => `${nodeName(node)}: taints ${dash(taintsOf(node).join(', '))}, version ${node.version}`,
    );
  },
});

const label = defineCommand({
  words: ['nodes', 'label'],
  summary: 'Set and remove operator labels; shows the labels after',
  operands: NODE,
  flags: {
    set: labelPairsFlag(
      `labels to set, e.g. rack=b7,fabric/rail=3 (at most ${MAX_LABELS}; a value may be empty)`,
    ),
    remove: {
      type: 'list',
      value: 'K1,K2',
      maxItems: MAX_LABELS,
      help: `operator label keys to remove (at most ${MAX_LABELS})`,
      checkItem: labelKeyProblem,
    },
    ...mutationFlags,
  },
  check({ flags }) {
    if (!flags.set && !flags.remove) throw new UsageError('give --set or --remove (or both)');
    const keys = refuseRepeatedLabelKeys('set', flags.set ?? []);
    refuseBoth(keys, flags.remove ?? [], 'set and removed');
  },
  async run({ api, out, args, flags }) {
    const node = await api.POST('/v1/nodes/{id}/label', {
      params: { path: { id: args.NODE } },
      body: {
        set: flags.set && labelObject(flags.set),
        remove: flags.remove,
        reason: flags.reason,
        version: flags['if-version'],
      },
    });
    out.result(node, () => `${nodeName(node)}: version ${node.version}\n${labelsTable(node.labels)}`);
  },
});

const adopt = defineCommand({
  words: ['nodes', 'adopt'],
  summary: 'Run acceptance again; the node leaves placement until its checks pass',
  operands: NODE,
  flags: mutationFlags,
  async run({ api, out, args, flags }) {
    const node = await api.POST('/v1/nodes/{id}/adopt', {
      params: { path: { id: args.NODE } },
      body: { reason: flags.reason, version: flags['if-version'] },
    });
    const pending =
      node.provisionState === 'adopting' ? '; out of placement until its acceptance checks pass' : '';
    out.result(node, () => `${nodeName(node)}: ${node.provisionState}, version ${node.version}${pending}`);
  },
});

const clearMaintenance = defineCommand({
  words: ['nodes', 'maintenance', 'clear'],
  summary: 'Take a node out of maintenance (only the system puts it in)',
  operands: NODE,
  flags: mutationFlags,
  async run({ api, out, args, flags }) {
    const node = await api.POST('/v1/nodes/{id}/maintenance', {
      params: { path: { id: args.NODE } },
      body: { maintenance: false, reason: flags.reason, version: flags['if-version'] },
    });
    out.result(node, () => `${nodeName(node)}: maintenance off, version ${node.version}`);
  },
});

const remove = defineCommand({
  words: ['nodes', 'delete'],
  summary: 'Delete a node for good (its history stays); needs --yes',
  operands: NODE,
  flags: {
    ...mutationFlags,
    yes: { type: 'boolean', help: 'yes, delete it: the node cannot come back (the machine may join anew)' },
  },
  check({ flags }) {
    if (!flags.yes) throw new UsageError('nodes delete removes for good; re-run with --yes');
  },
  async run({ api, out, args, flags }) {
    const result = await api.DELETE('/v1/nodes/{id}', {
      params: { path: { id: args.NODE } },
      body: { reason: flags.reason, version: flags['if-version'] },
    });
    out.result(result, () =>
      result.deleted ? `deleted ${result.nodeId}` : `${result.nodeId} was already deleted`,
    );
  },
});

/** The node refused the signed command: waiting longer would wait forever (a refused purge runs until a DELETE). */
const refusedByNode = (op: Operation) => op.status === 'running' && op.progress.phase === 'refused';

const purge = defineCommand({
  words: ['nodes', 'purge'],
  summary: 'Make a node delete itself from its machine, then forget it (cannot be undone); needs --yes',
  operands: NODE,
  flags: {
    reason: reasonFlag,
    'idempotency-key': idempotencyKeyFlag,
    yes: {
      type: 'boolean',
      help: 'yes, purge it: it deletes its keys, data and binary; the machine must be set up again to join',
    },
    force: {
      type: 'boolean',
      help: 'release the allocations the node still holds, with the purge (without it such a node is refused)',
    },
    wait: {
      ...waitFlag,
      help: 'block until the node is purged; exit 1 if it refuses or the purge ends otherwise',
    },
    timeout: timeoutFlag,
  },
  check({ flags }) {
    if (!flags.yes) {
      throw new UsageError('nodes purge removes the node from its machine for good; re-run with --yes');
    }
  },
  async run({ api, out, args, flags }) {
    let started: Answer<'post', '/v1/nodes/{id}/purge'>;
    try {
      started = await api.POST('/v1/nodes/{id}/purge', {
        params: { path: { id: args.NODE }, header: { 'idempotency-key': flags['idempotency-key'] } },
        body: { confirm: true, reason: flags.reason, force: flags.force },
      });
    } catch (error) {
      throw heldRefusal(error, args.NODE) ?? error;
    }
    const { node, operation } = started;
    if (!flags.wait) {
      out.result(
        started,
        () =>
          `${nodeName(node)}: purge ${operation.id} ${operation.status}; ` +
          'the node deletes itself when it next asks for commands',
      );
      return;
    }
    if (!out.json)
      out.note(`${nodeName(node)}: purge ${operation.id} ${operation.status}; waiting for the node`);
    const op = await waitForOperation(api, out, operation, flags.timeout, refusedByNode);
    if (refusedByNode(op)) {
      const reason =
        (op.progress.kind === 'purge' ? op.progress.waitingFor?.refusedReason : null) ?? 'no reason given';
      out.result(op, () => `purge ${op.id} ${op.status}: the node refused it`);
      throw new CliError(
        'PURGE_REFUSED',
        `${nodeName(node)} refused purge ${op.id}: ${reason}; it stays purging ` +
          `('drydock nodes delete ${node.id} --yes' forgets it)`,
        1,
      );
    }
    return reportFinished(out, op);
  },
});

/** A purge refused because the node holds allocations, as the command line says it: with --force. */
function heldRefusal(error: unknown, nodeId: string): CliError | undefined {
  if (!(error instanceof ApiError) || error.code !== 'INVALID_STATE') return undefined;
  const held = error.details.allocations as { id: string; tenantId: string }[] | undefined;
  const total = error.details.openAllocations;
  if (!Array.isArray(held) || typeof total !== 'number') return undefined;
  const named = held.map((a) => `${a.id} (${a.tenantId})`).join(', ');
  const more = total > held.length ? ` and ${total - held.length} more` : '';
  return new CliError(
    error.code,
    `${nodeId} still holds ${total} open allocation${total === 1 ? '' : 's'}: ${named}${more}; ` +
      'release them, or re-run with --force to release them with the purge',
  );
}

export const nodeControlCommands: Command[] = [taint, label, adopt, clearMaintenance, remove, purge];
