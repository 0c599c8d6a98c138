import { SLUG_PATTERN } from '../../domain/ids';
import type { FlagSpec } from '../command';

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

export const slugFlag = (value: string, help: string) =>
  ({
    type: 'string',
    value,
    help,
    pattern: SLUG_PATTERN,
    patternHint: '1–63 of a-z 0-9 -, starting with a letter',
  }) as const satisfies FlagSpec;
