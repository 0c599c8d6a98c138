import type { ApiClient, Schemas } from '@drydock/client';

type Operation = Schemas['Operation'];

/** The largest page `GET /v1/operations` hands out. */
const OPERATION_PAGE = 100;
/** The most open operations the overview reads (pages of 100). */
export const OPEN_OPERATIONS_READ = 500;

/**
 * The operations pending or running, oldest first, at most `OPEN_OPERATIONS_READ` of each status;
 * `more` when there were more than that.
 */
export async function openOperations(api: ApiClient): Promise<{ items: Operation[]; more: boolean }> {
  const read = async (status: 'pending' | 'running') => {
    const items: Operation[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.GET('/v1/operations', {
        params: { query: { status, limit: OPERATION_PAGE, cursor } },
      });
      items.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && items.length < OPEN_OPERATIONS_READ);
    return { items, more: cursor !== undefined };
  };
  const [pending, running] = await Promise.all([read('pending'), read('running')]);
  const items = [...pending.items, ...running.items].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  return { items, more: pending.more || running.more };
}
