-- Issue 18: a session row no longer holds its session id. Until now `data` held tower-sessions'
-- whole record, the id included (so a copy of the database could open every session), and a
-- new API token's text or a just-issued link waited in it until the next page view. From now
-- on a row holds only the session's data under a keyed hash of the id (HMAC with the site
-- keys), and one-time values travel in an encrypted cookie instead. The table keeps its shape.
--
-- The rows written the old way are dropped: every administrator signs in again once after
-- this upgrade. TRUNCATE gives the table a new, empty file instead of leaving the old rows
-- behind as dead tuples until a vacuum.
TRUNCATE sessions;
