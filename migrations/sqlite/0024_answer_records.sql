-- What an answer's record keeps beyond its words, for receipts and the evidence record: the
-- SHA-256 of the answer as stored (kept when retention erases the words), the link record it
-- came through, the client's address as a keyed hash (never the address), and how its holder
-- was checked ('email' for a step asked after an emailed code). All empty on lines written
-- before, and on lines that are not answers.
ALTER TABLE history ADD COLUMN answer_sha256 TEXT;
ALTER TABLE history ADD COLUMN link_id INTEGER;
ALTER TABLE history ADD COLUMN client TEXT;
ALTER TABLE history ADD COLUMN verified TEXT;
