import { DrydockError } from './errors';

export const LABEL_SOURCES = ['system', 'inventory', 'operator'] as const;
export type LabelSource = (typeof LABEL_SOURCES)[number];

export interface Label {
  key: string;
  value: string;
  source: LabelSource;
}

/** Up to 128 of letters, digits and `. _ / -`, starting and ending with a letter or digit. */
export const LABEL_KEY = /^[A-Za-z0-9]([A-Za-z0-9._/-]{0,126}[A-Za-z0-9])?$/;
/** Up to 256 of letters, digits and `. _ : / @ + = -`. */
export const LABEL_VALUE = /^[A-Za-z0-9._:/@+=-]{0,256}$/;
export const MAX_LABELS = 64;
/** Keys under this prefix are Drydock's own and never set or removed through the API. */
export const RESERVED_LABEL_PREFIX = 'drydock.dev/';

/** The rules of a label call that need no node: at least one key, none reserved, none in both. */
export function checkLabelRequest(set: Record<string, string>, remove: string[]): void {
  const setKeys = Object.keys(set);
  if (setKeys.length === 0 && remove.length === 0) {
    throw new DrydockError('INVALID_INPUT', 'give at least one label to set or key to remove');
  }
  const reserved = [...setKeys, ...remove].filter((key) => key.startsWith(RESERVED_LABEL_PREFIX));
  if (reserved.length > 0) {
    throw new DrydockError(
      'INVALID_INPUT',
      `keys under ${RESERVED_LABEL_PREFIX} are reserved: ${reserved.join(', ')}`,
      {
        keys: reserved,
      },
    );
  }
  const both = setKeys.filter((key) => remove.includes(key));
  if (both.length > 0) {
    throw new DrydockError('INVALID_INPUT', `a key cannot be set and removed at once: ${both.join(', ')}`, {
      keys: both,
    });
  }
}

/** What a label call changes given the node's labels; throws for keys inventory or the system own. */
export function labelDiff(
  current: Label[],
  set: Record<string, string>,
  remove: string[],
): { set: Record<string, string>; removed: string[] } {
  const byKey = new Map(current.map((label) => [label.key, label]));
  const owned = Object.keys(set).filter((key) => {
    const source = byKey.get(key)?.source;
    return source !== undefined && source !== 'operator';
  });
  if (owned.length > 0) {
    const owners = owned.map((key) => `${key} (${byKey.get(key)!.source})`).join(', ');
    throw new DrydockError('INVALID_INPUT', `these labels belong to inventory or the system: ${owners}`, {
      keys: owned,
    });
  }
  return {
    set: Object.fromEntries(Object.entries(set).filter(([key, value]) => byKey.get(key)?.value !== value)),
    // `remove` moves only operator labels; other keys are left alone.
    removed: remove.filter((key) => byKey.get(key)?.source === 'operator'),
  };
}
