CREATE TABLE "ssh_certificates" (
	"serial" bigserial PRIMARY KEY NOT NULL,
	"node_id" text NOT NULL,
	"principal" text NOT NULL,
	"key_id" text NOT NULL,
	"public_key_fingerprint" text NOT NULL,
	"issued_by" text NOT NULL,
	"reason" text NOT NULL,
	"issued_at" timestamp with time zone NOT NULL,
	"valid_after" timestamp with time zone NOT NULL,
	"valid_before" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_by" text,
	"revoked_reason" text
);
--> statement-breakpoint
ALTER TABLE "ssh_certificates" ADD CONSTRAINT "ssh_certificates_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ssh_certificates_node_idx" ON "ssh_certificates" USING btree ("node_id","serial");--> statement-breakpoint
CREATE INDEX "ssh_certificates_revoked_idx" ON "ssh_certificates" USING btree ("node_id","valid_before") WHERE "ssh_certificates"."revoked_at" is not null;