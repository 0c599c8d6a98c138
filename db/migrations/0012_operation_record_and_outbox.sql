CREATE TABLE "workflow_outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"workflow_id" text NOT NULL,
	"action" text NOT NULL,
	"operation_id" text,
	"signal" text,
	"reason" text,
	"request_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	CONSTRAINT "workflow_outbox_action_fields" CHECK (case "workflow_outbox"."action" when 'signal' then "workflow_outbox"."signal" is not null else "workflow_outbox"."operation_id" is not null end)
);
--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "phase" text DEFAULT 'waiting-for-worker' NOT NULL;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "deadline" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "next_check_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "waiting_for" jsonb;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "parent_operation_id" text;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "started_at" timestamp with time zone;--> statement-breakpoint
-- Operations recorded before the record kept its phase: the phase their final status means, and
-- the time they began as their start (they began in the request that recorded them).
UPDATE "operations" SET
  "phase" = CASE
    WHEN "status" = 'cancelled' THEN 'cancelled'
    WHEN "status" = 'succeeded' THEN CASE "kind" WHEN 'drain' THEN 'drained' WHEN 'purge' THEN 'purged'
      WHEN 'decommission' THEN 'decommissioned' ELSE 'succeeded' END
    WHEN "status" = 'failed' THEN CASE "kind" WHEN 'remediation' THEN 'escalated' ELSE 'failed' END
    ELSE "phase" END,
  "started_at" = CASE WHEN "status" <> 'pending' THEN "created_at" END;--> statement-breakpoint
CREATE INDEX "workflow_outbox_due_idx" ON "workflow_outbox" USING btree ("next_attempt_at","id");--> statement-breakpoint
CREATE INDEX "workflow_outbox_operation_idx" ON "workflow_outbox" USING btree ("operation_id") WHERE "workflow_outbox"."operation_id" is not null;--> statement-breakpoint
CREATE INDEX "operations_parent_idx" ON "operations" USING btree ("parent_operation_id") WHERE "operations"."parent_operation_id" is not null;