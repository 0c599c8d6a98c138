ALTER TABLE "allocations" ADD COLUMN "end_action" text;--> statement-breakpoint
ALTER TABLE "allocations" ADD COLUMN "end_answer" text;--> statement-breakpoint
ALTER TABLE "allocations" ADD COLUMN "ending_at" timestamp with time zone;