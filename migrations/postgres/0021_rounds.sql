-- Rounds: a step's route may send an instance back to an earlier step (`| on reject back to 1`),
-- and the steps from there on are asked again. `instances.round` counts the moves back (0 for an
-- instance that never went back); each history line keeps the round it was written in, so the
-- answers of the current round are told from earlier ones and the history keeps every round.
-- A constant default: no table is rewritten, and instances in flight are in round 0.
ALTER TABLE instances ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
ALTER TABLE history ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
