-- Schema version 5: rollout gates. A rollout whose policy file entry says
-- `canary` or `max_offered_per_period` offers its target only as far as its
-- gates allow. The engines sharing the store compute the gates from the
-- fleet and keep them here, so that every engine offers the same.

-- One row per gated rollout (by its target).
CREATE TABLE rollout_gates (
    target TEXT PRIMARY KEY,
    -- Unix seconds its canaries were chosen and offered the target; NULL:
    -- not yet.
    canaries_at BIGINT,
    -- When the last of them arrived: its schedule starts then. NULL: not
    -- yet.
    canaries_arrived_at BIGINT,
    -- How long the rollout had been paused by then (its schedule starts
    -- when they arrived, the pauses before not counted twice).
    canaries_paused_seconds BIGINT NOT NULL,
    -- The rate: the current period's start, the progress (percent) offered
    -- when it started, and the most the period allows. NULL: not counted
    -- yet.
    period_start BIGINT,
    period_base DOUBLE PRECISION,
    allowed DOUBLE PRECISION,
    -- What the gates say now, in words.
    reason TEXT NOT NULL,
    changed_at BIGINT NOT NULL
);

-- A rollout's canaries: the first clusters offered its target (their ids
-- as the fleet stores them, and their places).
CREATE TABLE rollout_canaries (
    target TEXT NOT NULL,
    cluster TEXT NOT NULL,
    place DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (target, cluster)
);
