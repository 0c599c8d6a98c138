CREATE TABLE "rate_limits" (
	"name" text NOT NULL,
	"source" text NOT NULL,
	"tat" timestamp with time zone NOT NULL,
	"allowed" boolean NOT NULL,
	CONSTRAINT "rate_limits_name_source_pk" PRIMARY KEY("name","source")
);
--> statement-breakpoint
CREATE INDEX "rate_limits_tat" ON "rate_limits" USING btree ("tat");