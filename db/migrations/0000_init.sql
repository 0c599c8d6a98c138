CREATE TABLE "allocations" (
	"id" text PRIMARY KEY NOT NULL,
	"node_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"kind" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ends_at" timestamp with time zone,
	"released_at" timestamp with time zone,
	"released_by" text
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"tenant_id" text,
	"actions" text[] DEFAULT '{}' NOT NULL,
	"secret_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"node_id" text,
	"tenant_id" text,
	"type" text NOT NULL,
	"actor" text NOT NULL,
	"reason" text,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"operation_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "node_labels" (
	"node_id" text NOT NULL,
	"key" text NOT NULL,
	"value" text NOT NULL,
	"source" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "node_labels_node_id_key_pk" PRIMARY KEY("node_id","key")
);
--> statement-breakpoint
CREATE TABLE "nodes" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text,
	"pool_id" text,
	"site_id" text,
	"hostname" text NOT NULL,
	"display_name" text,
	"provision_state" text NOT NULL,
	"access" text DEFAULT 'allowed' NOT NULL,
	"cordoned" boolean DEFAULT false NOT NULL,
	"maintenance" boolean DEFAULT false NOT NULL,
	"no_schedule_reasons" text[] DEFAULT '{}' NOT NULL,
	"connectivity" text DEFAULT 'disconnected' NOT NULL,
	"liveness" text DEFAULT 'alive' NOT NULL,
	"last_seen_at" timestamp with time zone,
	"conditions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"identity_generation" integer DEFAULT 1 NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "nodes_version_positive" CHECK ("nodes"."version" > 0)
);
--> statement-breakpoint
CREATE TABLE "operations" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"node_id" text,
	"pool_id" text,
	"status" text NOT NULL,
	"workflow_id" text NOT NULL,
	"actor" text NOT NULL,
	"reason" text,
	"idempotency_key" text,
	"request_hash" text,
	"result" jsonb,
	"error" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "pools" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"site_id" text NOT NULL,
	"tenant_id" text,
	"grants" text[] DEFAULT '{}' NOT NULL,
	"policy" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "allocations" ADD CONSTRAINT "allocations_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "node_labels" ADD CONSTRAINT "node_labels_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "nodes" ADD CONSTRAINT "nodes_pool_id_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."pools"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "allocations_open_idx" ON "allocations" USING btree ("node_id","ends_at") WHERE "allocations"."released_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_secret_hash_idx" ON "api_keys" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "events_node_idx" ON "events" USING btree ("node_id","id");--> statement-breakpoint
CREATE INDEX "nodes_pool_idx" ON "nodes" USING btree ("pool_id","id");--> statement-breakpoint
CREATE INDEX "nodes_tenant_idx" ON "nodes" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "operations_idempotency_key_idx" ON "operations" USING btree ("idempotency_key");--> statement-breakpoint
CREATE UNIQUE INDEX "operations_one_open_per_node_idx" ON "operations" USING btree ("node_id","kind") WHERE "operations"."status" in ('pending', 'running');--> statement-breakpoint
CREATE INDEX "operations_node_idx" ON "operations" USING btree ("node_id","id");