ALTER TABLE "allocations" ADD COLUMN "source" text;--> statement-breakpoint
ALTER TABLE "allocations" ADD COLUMN "external_id" text;--> statement-breakpoint
ALTER TABLE "allocations" ADD COLUMN "end_requested_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "allocations_source_live_idx" ON "allocations" USING btree ("source","external_id") WHERE "allocations"."released_at" is null and "allocations"."source" is not null;