import { sql } from 'drizzle-orm';
import type { Harness } from './harness';

/**
 * Everything a request could have changed: a digest of every table's rows (heartbeats flushed
 * first, so a beat recorded earlier is not taken for a change) and how many workflows this file's
 * task queue has seen. Equal snapshots: nothing was written and no workflow was started. Two
 * tables are left out, both written at authentication, before any authorization, by design
 * (docs/security.md): `rate_limits` counts refused authentications; `people` records that a
 * person's verified token was seen (who held which email, for the audit).
 */
export async function snapshot(h: Harness): Promise<Record<string, string>> {
  await h.deps.heartbeats.flush();
  const tables = await h.db.execute<{ name: string }>(
    sql`select table_name as name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE'
          and table_name not in ('rate_limits', 'people')
        order by table_name`,
  );
  const digests: Record<string, string> = {};
  for (const { name } of tables) {
    const [row] = await h.db.execute<{ rows: string; digest: string }>(
      sql`select count(*)::text as rows, md5(coalesce(string_agg(t::text, E'\n' order by t::text), '')) as digest
          from ${sql.identifier(name)} t`,
    );
    digests[name] = `${row!.rows} rows, ${row!.digest}`;
  }
  const { count } = await h.temporal.workflow.count(`TaskQueue = '${h.taskQueue}'`);
  digests['temporal workflows'] = String(count);
  return digests;
}
