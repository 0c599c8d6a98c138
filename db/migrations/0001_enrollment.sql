CREATE TABLE "node_commands" (
	"id" text PRIMARY KEY NOT NULL,
	"node_id" text NOT NULL,
	"kind" text NOT NULL,
	"action" text,
	"payload" text,
	"signature" text,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"operation_id" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"refuse_reason" text
);
--> statement-breakpoint
CREATE TABLE "controller_state" (
	"key" text PRIMARY KEY NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "node_certificates" (
	"serial" text PRIMARY KEY NOT NULL,
	"node_id" text NOT NULL,
	"public_key" text NOT NULL,
	"identity_generation" integer NOT NULL,
	"issued_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_reason" text
);
--> statement-breakpoint
CREATE TABLE "node_credentials" (
	"id" text PRIMARY KEY NOT NULL,
	"node_id" text NOT NULL,
	"secret_hash" text NOT NULL,
	"identity_generation" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_reason" text
);
--> statement-breakpoint
CREATE TABLE "accelerators" (
	"id" text PRIMARY KEY NOT NULL,
	"node_id" text NOT NULL,
	"model" text NOT NULL,
	"serial" text NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "storage_roots" (
	"id" text PRIMARY KEY NOT NULL,
	"node_id" text NOT NULL,
	"path" text NOT NULL,
	"bytes" bigint NOT NULL,
	"state" text DEFAULT 'writable' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "join_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"secret_hash" text NOT NULL,
	"pool_id" text NOT NULL,
	"tenant_id" text,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"description" text,
	"max_uses" integer NOT NULL,
	"uses" integer DEFAULT 0 NOT NULL,
	"expires_at" timestamp with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "unreachable_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "requested_pool_id" text;--> statement-breakpoint
ALTER TABLE "node_commands" ADD CONSTRAINT "node_commands_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "node_certificates" ADD CONSTRAINT "node_certificates_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "node_credentials" ADD CONSTRAINT "node_credentials_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "accelerators" ADD CONSTRAINT "accelerators_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_roots" ADD CONSTRAINT "storage_roots_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "node_commands_pending_idx" ON "node_commands" USING btree ("node_id","created_at") WHERE "node_commands"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "node_certificates_node_idx" ON "node_certificates" USING btree ("node_id");--> statement-breakpoint
CREATE INDEX "node_certificates_key_idx" ON "node_certificates" USING btree ("public_key");--> statement-breakpoint
CREATE UNIQUE INDEX "node_credentials_secret_hash_idx" ON "node_credentials" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "node_credentials_node_idx" ON "node_credentials" USING btree ("node_id");--> statement-breakpoint
CREATE INDEX "accelerators_node_idx" ON "accelerators" USING btree ("node_id");--> statement-breakpoint
CREATE INDEX "storage_roots_node_idx" ON "storage_roots" USING btree ("node_id");--> statement-breakpoint
CREATE UNIQUE INDEX "join_tokens_secret_hash_idx" ON "join_tokens" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "nodes_liveness_idx" ON "nodes" USING btree ("liveness","last_seen_at") WHERE "nodes"."deleted_at" is null;