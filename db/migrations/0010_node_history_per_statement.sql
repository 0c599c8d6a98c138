-- node_history_counts is kept by one upsert per statement (the inserted rows counted per node), not
-- one per row: a mass liveness event appends two events per node, and 2,000 row-level upserts were
-- most of a 10% sweep at 10,000 nodes. Nodes are upserted in id order, so two statements counting
-- the same nodes lock them in the same order.
CREATE OR REPLACE FUNCTION count_node_history() RETURNS trigger AS $$
BEGIN
  INSERT INTO node_history_counts (node_id, events, allocations, operations, inventory_snapshots)
  SELECT node_id,
    CASE WHEN TG_TABLE_NAME = 'events' THEN count(*) ELSE 0 END,
    CASE WHEN TG_TABLE_NAME = 'allocations' THEN count(*) ELSE 0 END,
    CASE WHEN TG_TABLE_NAME = 'operations' THEN count(*) ELSE 0 END,
    CASE WHEN TG_TABLE_NAME = 'inventory_snapshots' THEN count(*) ELSE 0 END
  FROM inserted
  WHERE node_id IS NOT NULL
  GROUP BY node_id
  ORDER BY node_id
  ON CONFLICT (node_id) DO UPDATE SET
    events = node_history_counts.events + EXCLUDED.events,
    allocations = node_history_counts.allocations + EXCLUDED.allocations,
    operations = node_history_counts.operations + EXCLUDED.operations,
    inventory_snapshots = node_history_counts.inventory_snapshots + EXCLUDED.inventory_snapshots;
  RETURN NULL;
END
$$ LANGUAGE plpgsql;
--> statement-breakpoint
DROP TRIGGER events_count_history ON events;
--> statement-breakpoint
CREATE TRIGGER events_count_history AFTER INSERT ON events REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION count_node_history();
--> statement-breakpoint
DROP TRIGGER allocations_count_history ON allocations;
--> statement-breakpoint
CREATE TRIGGER allocations_count_history AFTER INSERT ON allocations REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION count_node_history();
--> statement-breakpoint
DROP TRIGGER operations_count_history ON operations;
--> statement-breakpoint
CREATE TRIGGER operations_count_history AFTER INSERT ON operations REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION count_node_history();
--> statement-breakpoint
DROP TRIGGER inventory_snapshots_count_history ON inventory_snapshots;
--> statement-breakpoint
CREATE TRIGGER inventory_snapshots_count_history AFTER INSERT ON inventory_snapshots REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION count_node_history();
