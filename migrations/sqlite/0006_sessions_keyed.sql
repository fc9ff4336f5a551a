-- Issue 18: a session row no longer holds its session id. Until now `data` held tower-sessions'
-- whole record, the id included (so a copy of the database could open every session), and a
-- new API token's text or a just-issued link waited in it until the next page view. From now
-- on a row holds only the session's data under a keyed hash of the id (HMAC with the site
-- keys), and one-time values travel in an encrypted cookie instead. The table keeps its shape.
--
-- The rows written the old way are dropped: every administrator signs in again once after
-- this upgrade. secure_delete makes SQLite overwrite their bytes with zeros rather than leave
-- them in the file's free space; it is put back off for the rest of this connection's life.
PRAGMA secure_delete = ON;
DELETE FROM sessions;
PRAGMA secure_delete = OFF;
