CREATE TABLE "artifact_copies" (
	"id" text PRIMARY KEY NOT NULL,
	"artifact_id" text NOT NULL,
	"node_id" text NOT NULL,
	"path" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"removed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "inventory_current" (
	"node_id" text PRIMARY KEY NOT NULL,
	"data" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scheduler_entries" (
	"node_id" text PRIMARY KEY NOT NULL,
	"pool_id" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "telemetry_current" (
	"node_id" text PRIMARY KEY NOT NULL,
	"last_heartbeat_at" timestamp with time zone,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "inventory_snapshots" (
	"id" text PRIMARY KEY NOT NULL,
	"node_id" text NOT NULL,
	"data" jsonb NOT NULL,
	"taken_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "node_history_counts" (
	"node_id" text PRIMARY KEY NOT NULL,
	"events" bigint DEFAULT 0 NOT NULL,
	"allocations" bigint DEFAULT 0 NOT NULL,
	"operations" bigint DEFAULT 0 NOT NULL,
	"inventory_snapshots" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "artifact_copies" ADD CONSTRAINT "artifact_copies_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inventory_current" ADD CONSTRAINT "inventory_current_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scheduler_entries" ADD CONSTRAINT "scheduler_entries_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "telemetry_current" ADD CONSTRAINT "telemetry_current_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inventory_snapshots" ADD CONSTRAINT "inventory_snapshots_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "node_history_counts" ADD CONSTRAINT "node_history_counts_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "artifact_copies_node_idx" ON "artifact_copies" USING btree ("node_id");--> statement-breakpoint
CREATE INDEX "artifact_copies_artifact_idx" ON "artifact_copies" USING btree ("artifact_id");--> statement-breakpoint
CREATE UNIQUE INDEX "artifact_copies_place_idx" ON "artifact_copies" USING btree ("artifact_id","node_id","path");--> statement-breakpoint
CREATE INDEX "inventory_snapshots_node_idx" ON "inventory_snapshots" USING btree ("node_id","taken_at");