import { DrydockError } from '../domain/errors';

/** An opaque keyset cursor: the last key of the page, base64url. */
export function encodeCursor(lastKey: string): string {
  return Buffer.from(lastKey, 'utf8').toString('base64url');
}

/** The key inside a cursor, checked against the form keys of this listing have. */
export function decodeCursor(cursor: string | undefined, form: RegExp): string | undefined {
  if (cursor === undefined) return undefined;
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!form.test(key)) throw new DrydockError('INVALID_INPUT', 'cursor is not one this listing handed out');
  return key;
}

/** One page of `limit` items from `limit + 1` fetched rows, with the cursor of the next page. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => string) {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(keyOf(last)) : null };
}
