CREATE TABLE "capacity_history" (
	"pool_id" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"total" integer NOT NULL,
	"schedulable" integer NOT NULL,
	"cordoned" integer NOT NULL,
	"unhealthy" integer NOT NULL,
	"maintenance" integer NOT NULL,
	"unreachable" integer NOT NULL,
	CONSTRAINT "capacity_history_pool_id_at_pk" PRIMARY KEY("pool_id","at")
);
--> statement-breakpoint
CREATE INDEX "capacity_history_at_idx" ON "capacity_history" USING btree ("at");