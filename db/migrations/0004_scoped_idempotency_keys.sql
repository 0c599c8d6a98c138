DROP INDEX "operations_idempotency_key_idx";--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "idempotency_scope" text;--> statement-breakpoint
-- Keys recorded before scoping get their caller back where the actor names it unambiguously (the
-- bootstrap operator, an API key whose name no other key has); the rest a scope no caller has, so
-- they keep refusing each other as before and never collide with a new caller's key.
UPDATE "operations" o SET "idempotency_scope" = CASE
  WHEN o."actor" = 'key:bootstrap-operator' THEN 'bootstrap'
  ELSE coalesce(
    (SELECT min(k."id") FROM "api_keys" k WHERE 'key:' || k."name" = o."actor" HAVING count(*) = 1),
    'legacy'
  )
END
WHERE o."idempotency_key" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "operations_scoped_idempotency_key_idx" ON "operations" USING btree ("idempotency_scope","idempotency_key");--> statement-breakpoint
ALTER TABLE "operations" ADD CONSTRAINT "operations_idempotency_key_scoped" CHECK (("operations"."idempotency_key" is null) = ("operations"."idempotency_scope" is null));