-- Schema version 4: a paused rollout keeps the progress it had when it was
-- paused, the most it offers until resumed, whatever an edit of the policy
-- file does to its schedule meanwhile (a pause offers the target to nobody
-- new). NULL: running, or paused before this version (its schedule alone).
ALTER TABLE rollout_state ADD COLUMN paused_progress DOUBLE PRECISION;
