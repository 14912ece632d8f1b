-- Schema version 3: the per-version index carries `version_since` after the
-- version, so that counting clusters per version (with the oldest arrival
-- on each) and listing the clusters longest on a version read the index
-- alone (docs/benchmarks-fleet.md: on a million clusters, SQLite's count
-- per version from 4.5 s to about 0.2 s, the stuck clusters from 12.5 s to
-- 0.4 s).
DROP INDEX fleet_clusters_by_version;
CREATE INDEX fleet_clusters_by_version
    ON fleet_clusters (channel, arch, version, version_since, last_seen, place);
