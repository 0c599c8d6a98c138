import { timestamp } from 'drizzle-orm/pg-core';

/** Timestamp columns every mutable table carries. */
export const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
};

export const tz = (name: string) => timestamp(name, { withTimezone: true });
