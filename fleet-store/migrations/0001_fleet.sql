-- Schema version 1. Written once for SQLite and PostgreSQL: portable types
-- only (times are Unix seconds, places percentages).

-- One row per cluster (its id, or a keyed hash of it): what it last said.
CREATE TABLE fleet_clusters (
    id TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    arch TEXT NOT NULL,
    version TEXT NOT NULL,
    -- The cluster's place in rollouts, in percent (policy-engine's formula).
    place DOUBLE PRECISION NOT NULL,
    first_seen BIGINT NOT NULL,
    last_seen BIGINT NOT NULL,
    -- When it was first seen on its current version.
    version_since BIGINT NOT NULL
);
-- Per-version counts of active clusters read this index alone.
CREATE INDEX fleet_clusters_by_version
    ON fleet_clusters (channel, arch, version, last_seen, place);
-- Pruning.
CREATE INDEX fleet_clusters_by_last_seen ON fleet_clusters (last_seen);

-- Each change of a cluster's reported version: the sign it took an update.
-- Keyed so that engines sharing a store record a change once.
CREATE TABLE fleet_changes (
    cluster TEXT NOT NULL,
    from_version TEXT NOT NULL,
    to_version TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (cluster, from_version, to_version)
);
CREATE INDEX fleet_changes_by_target ON fleet_changes (to_version, at);
CREATE INDEX fleet_changes_by_time ON fleet_changes (at);
