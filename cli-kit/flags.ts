import { SLUG_PATTERN } from '../domain/ids';
import type { FlagSpec } from './spec';
import { isHttpUrl } from './values';

/** Flags both binaries have, so they read and check the same in each. */

/** An http(s) URL such as `--api`'s. */
export const urlFlag = (help: string) =>
  ({
    type: 'string',
    value: 'URL',
    help,
    accepts: isHttpUrl,
    patternHint: 'an http(s) URL',
  }) as const satisfies FlagSpec;

/** `https://x/` → `https://x`: the clients append paths that start with `/`. */
export const baseUrl = (url: string) => url.replace(/\/+$/, '');

/** A pool or tenant id: a slug. */
export const slugFlag = (value: string, help: string) =>
  ({
    type: 'string',
    value,
    help,
    pattern: SLUG_PATTERN,
    patternHint: '1–63 of a-z 0-9 -, starting with a letter',
  }) as const satisfies FlagSpec;
