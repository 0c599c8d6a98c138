CREATE TABLE "console_sessions" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"sealed_key" text NOT NULL,
	"csrf" text NOT NULL,
	"caller" jsonb NOT NULL,
	"flash" jsonb,
	"sealed_created" text,
	"expires_at" timestamp with time zone NOT NULL
);
