ALTER TABLE "nodes" ADD COLUMN "agent_session_id" text;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "previous_agent_session_id" text;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "session_alternations" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
-- Credentials made before they had a lifetime get a day: their agents renew them within it.
ALTER TABLE "node_credentials" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
UPDATE "node_credentials" SET "expires_at" = now() + interval '24 hours';--> statement-breakpoint
ALTER TABLE "node_credentials" ALTER COLUMN "expires_at" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "node_credentials" ADD COLUMN "renewed_from" text;--> statement-breakpoint
ALTER TABLE "node_credentials" ADD COLUMN "first_used_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "node_credentials" ADD COLUMN "renew_nonce" text;--> statement-breakpoint
ALTER TABLE "node_credentials" ADD COLUMN "renew_nonce_expires_at" timestamp with time zone;--> statement-breakpoint
-- A node's heartbeats moving to another agent run is announced on the node channel too: API
-- processes compare each heartbeat's session id with the node they keep (api/node-credentials.ts).
DROP TRIGGER nodes_changed_notify ON nodes;--> statement-breakpoint
CREATE TRIGGER nodes_changed_notify AFTER UPDATE ON nodes FOR EACH ROW
  WHEN (OLD.version IS DISTINCT FROM NEW.version
    OR OLD.identity_generation IS DISTINCT FROM NEW.identity_generation
    OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at
    OR OLD.agent_session_id IS DISTINCT FROM NEW.agent_session_id)
  EXECUTE FUNCTION drydock_notify_node_changed();
