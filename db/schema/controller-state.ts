import { pgTable, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';

/** Small named timestamps controllers keep between runs (the liveness sweep's last run, its grace). */
export const controllerState = pgTable('controller_state', {
  key: text('key').primaryKey(),
  at: tz('at').notNull(),
});
