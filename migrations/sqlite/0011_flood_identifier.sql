-- Issue 21: the flood store's sync reads other processes' live counts for the keys it answered,
-- `WHERE node <> ? AND expiration > ? AND identifier IN (…500 identifiers…)`. The primary key
-- starts with `event`, so `identifier` could not use it and every live row was scanned (0.58 s
-- a statement at a million rows). This index answers each identifier with a seek, and its
-- second column skips the expired rows cron has not deleted yet. See docs/performance.md.
CREATE INDEX flood_identifier ON flood (identifier, expiration);
