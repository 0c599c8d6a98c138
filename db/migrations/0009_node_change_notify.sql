-- Every committed change an agent's credential resolution reads is announced on the node channel
-- (db/wakeups.ts NODE_CHANNEL), whatever code path made it: API processes keep resolved credentials
-- without expiry (api/node-credentials.ts) and forget a node when this names it. A node change is
-- a version bump (every control, liveness and lifecycle change makes one; the heartbeat flush, which
-- writes last-seen times alone, does not), a new identity generation or a deletion; a credential
-- change is a new, revoked or removed credential.
CREATE FUNCTION drydock_notify_node_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('drydock_node', OLD.id);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER nodes_changed_notify AFTER UPDATE ON nodes FOR EACH ROW
  WHEN (OLD.version IS DISTINCT FROM NEW.version
    OR OLD.identity_generation IS DISTINCT FROM NEW.identity_generation
    OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
  EXECUTE FUNCTION drydock_notify_node_changed();
--> statement-breakpoint
CREATE TRIGGER nodes_deleted_notify AFTER DELETE ON nodes FOR EACH ROW
  EXECUTE FUNCTION drydock_notify_node_changed();
--> statement-breakpoint
CREATE FUNCTION drydock_notify_credential_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('drydock_node', CASE WHEN TG_OP = 'DELETE' THEN OLD.node_id ELSE NEW.node_id END);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER node_credentials_changed_notify AFTER INSERT OR UPDATE OR DELETE ON node_credentials
  FOR EACH ROW EXECUTE FUNCTION drydock_notify_credential_changed();
