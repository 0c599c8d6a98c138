-- Names in the order people read them: ICU's numeric ordering (gpu-2 before gpu-10), for node lists sorted by a name.
CREATE COLLATION IF NOT EXISTS "natural" (provider = icu, locale = 'und-u-kn-true');--> statement-breakpoint
CREATE INDEX "nodes_hostname_idx" ON "nodes" USING btree ("hostname" collate "natural","id");
