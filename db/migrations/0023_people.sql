CREATE TABLE "people" (
	"issuer" text NOT NULL,
	"subject" text NOT NULL,
	"actor" text NOT NULL,
	"email" text,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "people_issuer_subject_actor_pk" PRIMARY KEY("issuer","subject","actor")
);
--> statement-breakpoint
CREATE INDEX "people_actor_idx" ON "people" USING btree ("actor","first_seen_at");