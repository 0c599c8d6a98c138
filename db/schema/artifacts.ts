import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { tz } from './columns';
import { nodes } from './nodes';

/** Where copies of an artifact (model weights, datasets, images) live; a sole copy pins its node. */
export const artifactCopies = pgTable(
  'artifact_copies',
  {
    id: text('id').primaryKey(),
    artifactId: text('artifact_id').notNull(),
    nodeId: text('node_id')
      .notNull()
      .references(() => nodes.id),
    path: text('path').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    removedAt: tz('removed_at'),
  },
  (t) => [
    index('artifact_copies_node_idx').on(t.nodeId),
    index('artifact_copies_artifact_idx').on(t.artifactId),
    uniqueIndex('artifact_copies_place_idx').on(t.artifactId, t.nodeId, t.path),
  ],
);
