-- Links voided by a key rotation say so. The site's link keys have a generation, moved on by
-- each rotation in its own transaction; each link record keeps the generation it was signed
-- under, so a link is void when its generation is below the site's, with no write to the links
-- at the rotation (which, over a year of links, would hold the write lock). Every link recorded
-- so far was signed under the keys in force now: generation 0 on both sides.
ALTER TABLE site_keys ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE links ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
-- How many times a link's holder asked for a fresh one from its refused page: a few at most.
ALTER TABLE links ADD COLUMN fresh_asked INTEGER NOT NULL DEFAULT 0;

-- The link keys a rotation retired, kept only while a link signed under them could still be
-- unexpired (`keep_until`; cron deletes them after). They only recognise a voided link, so its
-- refused page can offer a fresh one; they never accept an answer.
CREATE TABLE retired_link_keys (
    generation INTEGER PRIMARY KEY,
    private_key TEXT NOT NULL,
    hash_salt TEXT NOT NULL,
    retired_at INTEGER NOT NULL,
    keep_until INTEGER NOT NULL
);
