ALTER TABLE "pools" ADD COLUMN "version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "pools" ADD CONSTRAINT "pools_version_positive" CHECK ("pools"."version" > 0);