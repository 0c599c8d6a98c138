import { DrydockError } from './errors';

/** 1–128 of letters, digits and `. _ / = : -`, starting and ending with a letter or digit. */
export const TAINT_KEY = /^[A-Za-z0-9]([A-Za-z0-9._/=:-]{0,126}[A-Za-z0-9])?$/;
export const MAX_TAINT_KEYS = 32;
export const TAINT_PREFIX = 'taint:';
export const DEDICATED_KEY_PREFIX = 'dedicated=';

export const taintReason = (key: string) => `${TAINT_PREFIX}${key}`;

/** The taint keys of a taint call, checked for the rules a schema cannot see. */
export function checkTaintRequest(add: string[], remove: string[]): void {
  if (add.length === 0 && remove.length === 0) {
    throw new DrydockError('INVALID_INPUT', 'give at least one key to add or remove');
  }
  const both = add.filter((key) => remove.includes(key));
  if (both.length > 0) {
    throw new DrydockError('INVALID_INPUT', `a key cannot be added and removed at once: ${both.join(', ')}`, {
      keys: both,
    });
  }
}
