import type { FlagSpec } from './command';
import type { Output } from './output';

/** A page of a cursor-paged listing, as the API answers it. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** `--limit` and `--all` of a listing whose pages hold at most `max` items. */
export const pagingFlags = (noun: string, max: number) =>
  ({
    limit: {
      type: 'integer',
      value: 'N',
      min: 1,
      max,
      help: `${noun} per page (≤ ${max}, default ${max})`,
    },
    all: { type: 'boolean', help: 'follow the cursor through every page' },
  }) as const satisfies Record<string, FlagSpec>;

/**
 * One page of a listing, or with `all` every page joined into one (`nextCursor: null`), printed
 * as the API's page with --json, else as `render` draws it; says when nothing matched and when
 * more pages are left.
 */
export async function printListing<T>(
  out: Output,
  options: {
    noun: string;
    all: boolean | undefined;
    fetch: (cursor: string | undefined) => Promise<Page<T>>;
    render: (items: readonly T[]) => string;
  },
): Promise<void> {
  let page = await options.fetch(undefined);
  if (options.all) {
    const items = [...page.items];
    while (page.nextCursor) {
      page = await options.fetch(page.nextCursor);
      items.push(...page.items);
    }
    page = { items, nextCursor: null };
  }
  if (!out.json && page.items.length === 0) {
    out.note(`no ${options.noun} match`);
    return;
  }
  const shown = page;
  out.result(shown, () => options.render(shown.items));
  if (!out.json && shown.nextCursor) {
    out.note(`more ${options.noun} than these ${shown.items.length}: add --all`);
  }
}
