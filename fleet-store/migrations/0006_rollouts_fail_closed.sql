-- Schema version 6: rollouts that fail closed, on evidence an outsider
-- cannot forge. Rollout control keeps times in Unix milliseconds (a pause
-- keeps the fraction of its second), the alerts firing on each rollout,
-- its last resume; gates choose and admit clusters by a secret lot and
-- keep every admission, so a rate counts distinct clusters.

-- The store's secret: the key of every cluster's lot (HMAC-SHA-256 of the
-- cluster's stored name). One row, made by the first engine to open the
-- store.
CREATE TABLE fleet_secret (
    id INTEGER PRIMARY KEY,
    secret TEXT NOT NULL
);

-- A cluster's lot, as a signed 64-bit number in the lot's order; NULL for
-- clusters not written since this version (they have none until their
-- next check is written).
ALTER TABLE fleet_clusters ADD COLUMN lot BIGINT;
-- Gates choose the first lots among the clusters of a version.
CREATE INDEX fleet_clusters_by_lot ON fleet_clusters (channel, arch, version, lot);

-- One row per rollout (by its target) that rollout control knows: made
-- when first read or changed, so every engine locks the same row.
CREATE TABLE rollout_control (
    target TEXT PRIMARY KEY,
    -- The pause in force: when, the progress (percent) it keeps, by whom;
    -- NULL: running.
    paused_at_ms BIGINT,
    paused_progress DOUBLE PRECISION,
    paused_by TEXT,
    -- How long its clock stood still in earlier pauses.
    stood_still_ms BIGINT NOT NULL,
    -- A progress (percent) held whatever the schedule.
    held_progress DOUBLE PRECISION,
    -- The last pause that ended: when it began, when it was resumed.
    resumed_from_ms BIGINT,
    resumed_at_ms BIGINT,
    -- The last change audited: action, actor, reason, when, a hold's
    -- progress.
    last_action TEXT,
    last_actor TEXT,
    last_reason TEXT,
    last_at_ms BIGINT,
    last_held DOUBLE PRECISION
);
INSERT INTO rollout_control
    (target, paused_at_ms, paused_progress, paused_by, stood_still_ms, held_progress, resumed_from_ms,
     resumed_at_ms, last_action, last_actor, last_reason, last_at_ms, last_held)
SELECT target,
       paused_at * 1000,
       CASE WHEN paused_at IS NULL THEN NULL ELSE COALESCE(paused_progress, 100.0) END,
       CASE WHEN paused_at IS NULL THEN NULL ELSE actor END,
       paused_seconds * 1000,
       held_progress,
       NULL,
       NULL,
       NULL, actor, reason, changed_at * 1000, NULL
FROM rollout_state;
DROP TABLE rollout_state;

-- Alertmanager's alerts firing on a rollout, by identity (fingerprint or
-- label set).
CREATE TABLE rollout_alerts (
    target TEXT NOT NULL,
    alert TEXT NOT NULL,
    alertname TEXT NOT NULL,
    since_ms BIGINT NOT NULL,
    PRIMARY KEY (target, alert)
);

-- Every change, for ever (not pruned with the fleet), in milliseconds.
CREATE TABLE rollout_audit_v6 (
    id TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    reason TEXT NOT NULL,
    held_progress DOUBLE PRECISION,
    at_ms BIGINT NOT NULL
);
INSERT INTO rollout_audit_v6 (id, target, action, actor, reason, held_progress, at_ms)
SELECT id, target, action, actor, reason, held_progress, at * 1000 FROM rollout_audit;
DROP TABLE rollout_audit;
ALTER TABLE rollout_audit_v6 RENAME TO rollout_audit;
CREATE INDEX rollout_audit_by_target ON rollout_audit (target, at_ms);
CREATE INDEX rollout_audit_by_time ON rollout_audit (at_ms);

-- A gated rollout's gates.
CREATE TABLE rollout_gate_state (
    target TEXT PRIMARY KEY,
    -- The rollout's rotation of lots (secret; never shown).
    lot_offset BIGINT NOT NULL,
    judged_at_ms BIGINT NOT NULL,
    -- Canaries: when chosen, when the last arrived, how long the rollout
    -- had been paused by then.
    canaries_at_ms BIGINT,
    canaries_arrived_at_ms BIGINT,
    canaries_paused_ms BIGINT NOT NULL,
    -- The rate: its first period's start (NULL: not counted yet), the
    -- period last counted and its admissions, every admission so far and
    -- those offered before the rate was counted.
    rate_origin_ms BIGINT,
    rate_period BIGINT NOT NULL,
    rate_in_period BIGINT NOT NULL,
    rate_admitted BIGINT NOT NULL,
    rate_before BIGINT NOT NULL,
    -- A rate an earlier version counted let clusters placed below this in.
    legacy_threshold DOUBLE PRECISION,
    -- Candidates the last round left waiting.
    waiting BIGINT NOT NULL,
    changed_at_ms BIGINT NOT NULL
);
INSERT INTO rollout_gate_state
    (target, lot_offset, judged_at_ms, canaries_at_ms, canaries_arrived_at_ms, canaries_paused_ms,
     rate_origin_ms, rate_period, rate_in_period, rate_admitted, rate_before, legacy_threshold,
     waiting, changed_at_ms)
SELECT target, 0, changed_at * 1000, canaries_at * 1000, canaries_arrived_at * 1000,
       canaries_paused_seconds * 1000, NULL, 0, 0, 0, 0, allowed, 0, changed_at * 1000
FROM rollout_gates;

-- A rollout's canaries (their names as the fleet stores them; their lots
-- are computed from the names), and when each arrived.
CREATE TABLE rollout_gate_canaries (
    target TEXT NOT NULL,
    cluster TEXT NOT NULL,
    place DOUBLE PRECISION NOT NULL,
    arrived_at_ms BIGINT,
    PRIMARY KEY (target, cluster)
);
INSERT INTO rollout_gate_canaries (target, cluster, place, arrived_at_ms)
SELECT c.target, c.cluster, c.place, g.canaries_arrived_at * 1000
FROM rollout_canaries c JOIN rollout_gates g ON g.target = c.target;
DROP TABLE rollout_canaries;
DROP TABLE rollout_gates;

-- Every cluster a rate admitted (offered the target), once: the period it
-- was admitted in (-1: offered before the rate was counted), when, and its
-- number among the rollout's admissions (engines read only those after
-- the last they read).
CREATE TABLE rollout_admissions (
    target TEXT NOT NULL,
    cluster TEXT NOT NULL,
    period BIGINT NOT NULL,
    at_ms BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (target, cluster)
);
CREATE INDEX rollout_admissions_by_seq ON rollout_admissions (target, seq);
