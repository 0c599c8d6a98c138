import { pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { LABEL_SOURCES } from '../../domain/labels';
import { timestamps } from './columns';
import { nodes } from './nodes';

export const nodeLabels = pgTable(
  'node_labels',
  {
    nodeId: text('node_id')
      .notNull()
      .references(() => nodes.id),
    key: text('key').notNull(),
    value: text('value').notNull(),
    source: text('source', { enum: LABEL_SOURCES }).notNull(),
    ...timestamps,
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.key] })],
);
