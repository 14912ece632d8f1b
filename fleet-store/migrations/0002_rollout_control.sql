-- Schema version 2: rollouts under run-time control. The policy file
-- declares each rollout; what operators and automation change at run time
-- is kept here, shared by every engine of the store.

-- One row per rollout (by its target) changed at run time.
CREATE TABLE rollout_state (
    target TEXT PRIMARY KEY,
    -- Unix seconds the rollout's clock stopped (paused); NULL: running.
    paused_at BIGINT,
    -- Seconds its clock stood still in earlier pauses: the schedule runs
    -- that much later than the file says.
    paused_seconds BIGINT NOT NULL,
    -- A progress (percent) held whatever the schedule; NULL: the schedule.
    held_progress DOUBLE PRECISION,
    -- The last change: who, why, when.
    actor TEXT NOT NULL,
    reason TEXT NOT NULL,
    changed_at BIGINT NOT NULL
);

-- Every change, for ever (not pruned with the fleet).
CREATE TABLE rollout_audit (
    id TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    reason TEXT NOT NULL,
    held_progress DOUBLE PRECISION,
    at BIGINT NOT NULL
);
CREATE INDEX rollout_audit_by_target ON rollout_audit (target, at);
