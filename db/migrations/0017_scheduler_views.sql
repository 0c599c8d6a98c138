CREATE TABLE "scheduler_views" (
	"node_id" text NOT NULL,
	"source" text NOT NULL,
	"name" text NOT NULL,
	"state" text NOT NULL,
	"reason" text,
	"cordoned" boolean NOT NULL,
	"cordoned_by_drydock" boolean NOT NULL,
	"down" boolean NOT NULL,
	"disagreement" text,
	"observed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "scheduler_views_node_id_source_pk" PRIMARY KEY("node_id","source")
);
--> statement-breakpoint
ALTER TABLE "scheduler_views" ADD CONSTRAINT "scheduler_views_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;