-- History counters: a decommission preview reports retained history without counting it.
CREATE FUNCTION count_node_history() RETURNS trigger AS $$
BEGIN
  IF NEW.node_id IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO node_history_counts (node_id, events, allocations, operations, inventory_snapshots)
  VALUES (
    NEW.node_id,
    CASE WHEN TG_TABLE_NAME = 'events' THEN 1 ELSE 0 END,
    CASE WHEN TG_TABLE_NAME = 'allocations' THEN 1 ELSE 0 END,
    CASE WHEN TG_TABLE_NAME = 'operations' THEN 1 ELSE 0 END,
    CASE WHEN TG_TABLE_NAME = 'inventory_snapshots' THEN 1 ELSE 0 END
  )
  ON CONFLICT (node_id) DO UPDATE SET
    events = node_history_counts.events + EXCLUDED.events,
    allocations = node_history_counts.allocations + EXCLUDED.allocations,
    operations = node_history_counts.operations + EXCLUDED.operations,
    inventory_snapshots = node_history_counts.inventory_snapshots + EXCLUDED.inventory_snapshots;
  RETURN NULL;
END
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER events_count_history AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION count_node_history();
--> statement-breakpoint
CREATE TRIGGER allocations_count_history AFTER INSERT ON allocations FOR EACH ROW EXECUTE FUNCTION count_node_history();
--> statement-breakpoint
CREATE TRIGGER operations_count_history AFTER INSERT ON operations FOR EACH ROW EXECUTE FUNCTION count_node_history();
--> statement-breakpoint
CREATE TRIGGER inventory_snapshots_count_history AFTER INSERT ON inventory_snapshots FOR EACH ROW EXECUTE FUNCTION count_node_history();
--> statement-breakpoint
INSERT INTO node_history_counts (node_id, events, allocations, operations, inventory_snapshots)
SELECT n.id,
  (SELECT count(*) FROM events e WHERE e.node_id = n.id),
  (SELECT count(*) FROM allocations a WHERE a.node_id = n.id),
  (SELECT count(*) FROM operations o WHERE o.node_id = n.id),
  (SELECT count(*) FROM inventory_snapshots s WHERE s.node_id = n.id)
FROM nodes n
ON CONFLICT (node_id) DO NOTHING;
--> statement-breakpoint
-- The invariant decommissioned_nodes_are_terminal (docs/lifecycle/decommission.md): no change moves a
-- decommissioned node's state axes again, whatever code path tries.
CREATE FUNCTION decommissioned_nodes_are_terminal() RETURNS trigger AS $$
BEGIN
  IF OLD.provision_state = 'decommissioned' AND (
       NEW.provision_state IS DISTINCT FROM OLD.provision_state
    OR NEW.liveness IS DISTINCT FROM OLD.liveness
    OR NEW.access IS DISTINCT FROM OLD.access
    OR NEW.cordoned IS DISTINCT FROM OLD.cordoned
    OR NEW.maintenance IS DISTINCT FROM OLD.maintenance
    OR NEW.no_schedule_reasons IS DISTINCT FROM OLD.no_schedule_reasons
    OR NEW.identity_generation IS DISTINCT FROM OLD.identity_generation
    OR NEW.deleted_at IS DISTINCT FROM OLD.deleted_at
  ) THEN
    RAISE EXCEPTION 'decommissioned_nodes_are_terminal: node % is decommissioned', OLD.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'decommissioned_nodes_are_terminal';
  END IF;
  RETURN NEW;
END
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER decommissioned_nodes_are_terminal BEFORE UPDATE ON nodes
  FOR EACH ROW EXECUTE FUNCTION decommissioned_nodes_are_terminal();
