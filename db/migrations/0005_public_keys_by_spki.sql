CREATE TABLE "node_public_keys" (
	"spki_sha256" text PRIMARY KEY NOT NULL,
	"node_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "node_certificates_key_idx";--> statement-breakpoint
ALTER TABLE "node_public_keys" ADD CONSTRAINT "node_public_keys_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Keys already issued: an SPKI PEM's body is the base64 of the SPKI bytes, whatever its line width
-- or line ends. Where the old text comparison let several nodes join with one key, the key belongs
-- to the node it was issued to first. Rows that hold no PEM at all (fixtures) have no key to claim.
INSERT INTO "node_public_keys" ("spki_sha256", "node_id", "created_at")
SELECT DISTINCT ON (k.spki_sha256) k.spki_sha256, k.node_id, k.issued_at
FROM (
  SELECT encode(sha256(decode(b.body, 'base64')), 'hex') AS spki_sha256, c.node_id, c.issued_at, c.serial
  FROM "node_certificates" c,
    LATERAL (SELECT regexp_replace(c.public_key, '-----(BEGIN|END) PUBLIC KEY-----|\s', '', 'g') AS body) b
  WHERE c.public_key ~ '^\s*-----BEGIN PUBLIC KEY-----[A-Za-z0-9+/=\s]+-----END PUBLIC KEY-----\s*$'
    AND b.body ~ '^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$'
) k
ORDER BY k.spki_sha256, k.issued_at, k.serial;
