import { LABEL_KEY, LABEL_VALUE, MAX_LABELS, RESERVED_LABEL_PREFIX } from '../../domain/labels';
import { MAX_TAINT_KEYS, TAINT_KEY } from '../../domain/taints';
import { defineCommand, type Command, type FlagSpec } from '../command';
import { UsageError } from '../errors';
import { dash } from '../output';
import { labelsTable, nodeName, taintsOf, type Node } from '../views';
import { ifVersionFlag, reasonFlag } from './flags';

/** Node controls beyond cordon and drain (spec/nodes.md): taints, labels, adopt, maintenance, delete. */

const NODE = [{ name: 'NODE', type: 'node' }] as const;

const mutationFlags = { reason: reasonFlag, 'if-version': ifVersionFlag } as const;

const TAINT_KEY_RULE =
  'a taint key is 1–128 of letters, digits and . _ / = : -, starting and ending with a letter or digit';
const LABEL_KEY_RULE =
  'a label key is up to 128 of letters, digits and . _ / -, starting and ending with a letter or digit';
const LABEL_VALUE_RULE = 'a label value is up to 256 of letters, digits and . _ : / @ + = -';

const taintKeysFlag = (help: string) =>
  ({
    type: 'list',
    value: 'K1,K2',
    maxItems: MAX_TAINT_KEYS,
    help: `${help} (comma-separated, at most ${MAX_TAINT_KEYS})`,
    checkItem: (key) => (TAINT_KEY.test(key) ? undefined : `is not a taint key: ${TAINT_KEY_RULE}`),
  }) as const satisfies FlagSpec;

/** What is wrong with a label key the operator names, or undefined. */
function labelKeyProblem(key: string): string | undefined {
  if (!LABEL_KEY.test(key)) return `is not a label key: ${LABEL_KEY_RULE}`;
  if (key.startsWith(RESERVED_LABEL_PREFIX))
    return `is under ${RESERVED_LABEL_PREFIX}, which Drydock reserves`;
  return undefined;
}

/** `rack=b7` → `['rack', 'b7']`; the value is everything after the first `=` and may be empty. */
function splitLabel(item: string): [string, string] | null {
  const eq = item.indexOf('=');
  return eq === -1 ? null : [item.slice(0, eq), item.slice(eq + 1)];
}

function labelPairProblem(item: string): string | undefined {
  const pair = splitLabel(item);
  if (!pair) return 'must be KEY=VALUE';
  const [key, value] = pair;
  const keyProblem = labelKeyProblem(key);
  if (keyProblem) return `has a key that ${keyProblem}`;
  if (!LABEL_VALUE.test(value)) return `has a value that is not a label value: ${LABEL_VALUE_RULE}`;
  return undefined;
}

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
    const node = await api.post<Node>(`/v1/nodes/${args.NODE}/taint`, {
      add: flags.add,
      remove: flags.remove,
      reason: flags.reason,
      version: flags['if-version'],
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
    set: {
      type: 'list',
      value: 'K=V,…',
      maxItems: MAX_LABELS,
      help: `labels to set, e.g. rack=b7,fabric/rail=3 (at most ${MAX_LABELS}; a value may be empty)`,
      checkItem: labelPairProblem,
    },
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
    const keys = (flags.set ?? []).map((item) => splitLabel(item)![0]);
    const twice = keys.filter((key, i) => keys.indexOf(key) !== i);
    if (twice.length > 0) throw new UsageError(`--set names ${[...new Set(twice)].join(', ')} twice`);
    refuseBoth(keys, flags.remove ?? [], 'set and removed');
  },
  async run({ api, out, args, flags }) {
    const node = await api.post<Node>(`/v1/nodes/${args.NODE}/label`, {
      set: flags.set && Object.fromEntries(flags.set.map((item) => splitLabel(item)!)),
      remove: flags.remove,
      reason: flags.reason,
      version: flags['if-version'],
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
    const node = await api.post<Node>(`/v1/nodes/${args.NODE}/adopt`, {
      reason: flags.reason,
      version: flags['if-version'],
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
    const node = await api.post<Node>(`/v1/nodes/${args.NODE}/maintenance`, {
      maintenance: false,
      reason: flags.reason,
      version: flags['if-version'],
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
    const result = await api.delete<{ nodeId: string; deleted: boolean }>(`/v1/nodes/${args.NODE}`, {
      reason: flags.reason,
      version: flags['if-version'],
    });
    out.result(result, () =>
      result.deleted ? `deleted ${result.nodeId}` : `${result.nodeId} was already deleted`,
    );
  },
});

export const nodeControlCommands: Command[] = [taint, label, adopt, clearMaintenance, remove];
