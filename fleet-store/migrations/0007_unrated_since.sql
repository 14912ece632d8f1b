-- Schema version 7: when an engine first ran each rollout declared without
-- a rate (its schedule alone offering the target). A rate added later keeps
-- what that schedule offered; a rollout always declared with its rate
-- offered nobody before the rate was first judged. NULL for every rollout
-- when migrated: an engine marks those it runs without a rate at its next
-- read (fail closed: a rate first judged before then admits by the rate).
ALTER TABLE rollout_control ADD COLUMN unrated_since_ms BIGINT;
