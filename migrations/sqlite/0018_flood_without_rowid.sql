-- Issue 21: cron deletes a flood of expired counts a batch at a time. In a rowid table each row
-- lives in four B-trees (the rows by rowid, the primary key's index, `flood_expiration`,
-- `flood_identifier`), and the flood's identifiers are keyed hashes, so a batch of 500 rows
-- touched some 3,000 pages scattered over all four: 12 MB written to the WAL and checkpointed per
-- batch, 35 ms of the write lock on an idle machine and up to 2 s beside a visitor. Without a
-- rowid the rows are stored in their key's order, and cron walks that order (`store::expired`):
-- 4 MB and 3.5 ms a batch. Lookups by key read one B-tree instead of two.
--
-- Only the counts still live are copied: the expired ones are what cron would delete, and
-- copying a backlog of millions would hold the upgrade for minutes.
CREATE TABLE flood_keyed (
    event TEXT NOT NULL,
    identifier TEXT NOT NULL,
    node TEXT NOT NULL,
    bucket_start INTEGER NOT NULL,
    expiration INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (event, identifier, node, bucket_start)
) WITHOUT ROWID;
INSERT INTO flood_keyed (event, identifier, node, bucket_start, expiration, count)
    SELECT event, identifier, node, bucket_start, expiration, count FROM flood
    WHERE expiration > CAST(strftime('%s', 'now') AS INTEGER) * 1000;
DROP TABLE flood;
ALTER TABLE flood_keyed RENAME TO flood;
CREATE INDEX flood_expiration ON flood (expiration);
CREATE INDEX flood_identifier ON flood (identifier, expiration);
