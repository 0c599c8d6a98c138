CREATE TABLE "disruptions" (
	"node_id" text PRIMARY KEY NOT NULL,
	"pool_id" text NOT NULL,
	"operation_id" text NOT NULL,
	"state" text NOT NULL,
	"since" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "cancellation" jsonb;--> statement-breakpoint
ALTER TABLE "disruptions" ADD CONSTRAINT "disruptions_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "disruptions" ADD CONSTRAINT "disruptions_pool_id_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."pools"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "disruptions_pool_idx" ON "disruptions" USING btree ("pool_id","state");--> statement-breakpoint
CREATE UNIQUE INDEX "operations_one_open_pool_drain_idx" ON "operations" USING btree ("pool_id") WHERE "operations"."kind" = 'pool-drain' and "operations"."status" in ('pending', 'running');