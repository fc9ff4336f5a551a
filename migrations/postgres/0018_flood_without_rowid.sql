-- Issue 21: SQLite's flood table is stored in its key's order from this migration on (see
-- migrations/sqlite/0018). PostgreSQL's tables are heaps: its cron deletes the oldest expired
-- counts through `flood_expiration` and measured well (14,000 rows a second beside a visitor,
-- docs/performance.md), so nothing changes here; the file keeps both backends' versions alike.
SELECT 1;
