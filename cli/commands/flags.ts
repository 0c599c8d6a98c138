import { parseDeadline } from '../../domain/deadline';
import { idPattern } from '../../domain/ids';
import { parseSelector } from '../../domain/selector';
import { LABEL_KEY, LABEL_VALUE, MAX_LABELS, RESERVED_LABEL_PREFIX } from '../../domain/labels';
import type { FlagSpec } from '../command';
import { UsageError } from '../errors';

/** Flags several commands share, so they read and check the same everywhere. */

export const reasonFlag = {
  type: 'string',
  value: 'R',
  help: 'why (≤ 256 characters; stored on the event)',
  maxLength: 256,
} as const satisfies FlagSpec;

export const ifVersionFlag = {
  type: 'integer',
  value: 'N',
  min: 1,
  help: 'refuse with CONFLICT unless the node is still at version N',
} as const satisfies FlagSpec;

/** What a change to one node takes: why, and the version it must still be at. */
export const mutationFlags = { reason: reasonFlag, 'if-version': ifVersionFlag } as const;

export const waitFlag = {
  type: 'boolean',
  help: 'block until the operation ends; exit 1 unless it succeeded',
} as const satisfies FlagSpec;

export const timeoutFlag = {
  type: 'duration',
  value: 'DURATION',
  requires: 'wait',
  help: 'with --wait: give up waiting after DURATION (90s, 10m, 2h); the operation goes on',
} as const satisfies FlagSpec;

/** `Idempotency-Key`: the API answers a retry with the same K with the operation it started. */
export const idempotencyKeyFlag = {
  type: 'string',
  value: 'K',
  pattern: /^[A-Za-z0-9._:-]{8,128}$/,
  patternHint: '8–128 of letters, digits and . _ : -',
  help: 'retrying with the same K returns the same operation',
} as const satisfies FlagSpec;

/** `--deadline WHEN`: when a drain force-releases what is still live (domain/deadline.ts). */
export const deadlineFlag = (help: string) =>
  ({
    type: 'string',
    value: 'WHEN',
    maxLength: 64,
    accepts: (value) => 'deadline' in parseDeadline(value, Date.now()),
    patternHint: 'an RFC 3339 time within 30 days (2026-12-01T18:00:00Z) or a duration such as 2h (0s: now)',
    help,
  }) as const satisfies FlagSpec;

/** `--selector K=V,…`: a label selector, as the API's `selector` takes it (domain/selector.ts). */
export const selectorFlag = (help: string, fallback?: string) =>
  ({
    type: 'string',
    value: 'K=V,…',
    maxLength: 4096,
    accepts: (value) => 'selector' in parseSelector(value),
    patternHint: 'KEY=VALUE[,KEY=VALUE…], each a label key and value, no key twice',
    ...(fallback === undefined ? {} : { default: fallback }),
    help,
  }) as const satisfies FlagSpec;

export { slugFlag } from '../../cli-kit/flags';

/** `--node NODE`: a node id, to narrow a listing to one node. */
export const nodeFlag = (help: string) =>
  ({
    type: 'string',
    value: 'NODE',
    pattern: idPattern('node'),
    patternHint: 'a node id, node_ followed by a 26-character ULID',
    help,
  }) as const satisfies FlagSpec;

const LABEL_KEY_RULE =
  'a label key is up to 128 of letters, digits and . _ / -, starting and ending with a letter or digit';
const LABEL_VALUE_RULE = 'a label value is up to 256 of letters, digits and . _ : / @ + = -';

/** What is wrong with a label key the operator names, or undefined. */
export function labelKeyProblem(key: string): string | undefined {
  if (!LABEL_KEY.test(key)) return `is not a label key: ${LABEL_KEY_RULE}`;
  if (key.startsWith(RESERVED_LABEL_PREFIX))
    return `is under ${RESERVED_LABEL_PREFIX}, which Drydock reserves`;
  return undefined;
}

/** `rack=b7` → `['rack', 'b7']`; the value is everything after the first `=` and may be empty. */
export function splitLabel(item: string): [string, string] | null {
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

/** `KEY=VALUE` labels, comma-separated; `repeatable` also takes `--flag a=1 --flag b=2`. */
export const labelPairsFlag = (help: string, repeatable = false) =>
  ({
    type: 'list',
    value: 'K=V,…',
    maxItems: MAX_LABELS,
    repeatable,
    help,
    checkItem: labelPairProblem,
  }) as const satisfies FlagSpec;

/** The keys of checked `KEY=VALUE` items; a key given twice (with two values) is a usage error. */
export function refuseRepeatedLabelKeys(flag: string, items: readonly string[]): string[] {
  const keys = items.map((item) => splitLabel(item)![0]);
  const twice = keys.filter((key, i) => keys.indexOf(key) !== i);
  if (twice.length > 0) throw new UsageError(`--${flag} names ${[...new Set(twice)].join(', ')} twice`);
  return keys;
}

/** Pairs of checked `KEY=VALUE` items as the API's label object. */
export const labelObject = (items: readonly string[]): Record<string, string> =>
  Object.fromEntries(items.map((item) => splitLabel(item)!));
