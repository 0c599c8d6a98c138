import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, inject } from 'vitest';
import { withDatabase } from './database-url';

/**
 * Databases with nothing in them, not cloned from the migrated template: for tests of migrating
 * itself. `create()` makes one and resolves to its URL; all are dropped after the file.
 */
export function useEmptyDatabases(prefix: string) {
  let admin: postgres.Sql | undefined;
  const made: string[] = [];
  afterAll(async () => {
    for (const name of made) await admin?.unsafe(`drop database if exists ${name} with (force)`);
    await admin?.end();
  });
  return {
    async create(): Promise<string> {
      const templateUrl = inject('templateDatabaseUrl');
      admin ??= postgres(withDatabase(templateUrl, 'postgres'), { max: 1, onnotice: () => {} });
      const name = `${prefix}_${randomBytes(4).toString('hex')}`;
      await admin.unsafe(`create database ${name}`);
      made.push(name);
      return withDatabase(templateUrl, name);
    },
  };
}
