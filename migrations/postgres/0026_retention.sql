-- Retention and erasure. `ended_at`: when an instance ended (completed, rejected, cancelled,
-- expired); the clock a retention period runs from. Instances ended before this migration take
-- their last history line's time (their end's line), else their last change. `erased_at`: when
-- cron or `orchestra contact erase` took their answers, files and contacts away; the instance's
-- shape and the answers' hashes stay. The partial index holds only ended instances not erased
-- yet, by workflow and end: cron's search for the due ones reads a range of it per workflow.
ALTER TABLE instances ADD COLUMN ended_at BIGINT;
ALTER TABLE instances ADD COLUMN erased_at BIGINT;
UPDATE instances SET ended_at = COALESCE(
    (SELECT MAX(h.at) FROM history h WHERE h.instance_id = instances.id), updated_at)
    WHERE state <> 'active';
CREATE INDEX instances_erase_due ON instances (workflow_id, ended_at)
    WHERE erased_at IS NULL AND ended_at IS NOT NULL;
-- `orchestra contact erase` finds an address's contacts without case.
CREATE INDEX contacts_email ON contacts (LOWER(email));
