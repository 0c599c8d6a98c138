CREATE TABLE "agent_actions" (
	"node_id" text PRIMARY KEY NOT NULL,
	"actions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"reported_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "boot_id" text;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "booted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "requested_by" text;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "reason" text;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "args" jsonb;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "started_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "exit_code" integer;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "stdout" text;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "stderr" text;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "output_dropped" bigint;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "idempotency_scope" text;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "idempotency_key" text;--> statement-breakpoint
ALTER TABLE "node_commands" ADD COLUMN "request_hash" text;--> statement-breakpoint
ALTER TABLE "agent_actions" ADD CONSTRAINT "agent_actions_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "node_commands_node_idx" ON "node_commands" USING btree ("node_id","id");--> statement-breakpoint
CREATE INDEX "node_commands_expiring_idx" ON "node_commands" USING btree ("expires_at") WHERE "node_commands"."status" = 'pending' and "node_commands"."expires_at" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "node_commands_scoped_idempotency_key_idx" ON "node_commands" USING btree ("idempotency_scope","idempotency_key");--> statement-breakpoint
ALTER TABLE "node_commands" ADD CONSTRAINT "node_commands_idempotency_key_scoped" CHECK (("node_commands"."idempotency_key" is null) = ("node_commands"."idempotency_scope" is null));