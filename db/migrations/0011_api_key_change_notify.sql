-- Every committed change to an API key (revoked, rotated, deleted) is announced on the key channel
-- (db/wakeups.ts KEYS_CHANNEL), whatever code path made it: API processes keep resolved keys
-- without expiry (api/api-keys.ts) and forget a key when this names it. A new key needs no word:
-- secrets nobody holds yet are never kept.
CREATE FUNCTION drydock_notify_api_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('drydock_keys', OLD.id);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER api_keys_changed_notify AFTER UPDATE OR DELETE ON api_keys FOR EACH ROW
  EXECUTE FUNCTION drydock_notify_api_key_changed();
