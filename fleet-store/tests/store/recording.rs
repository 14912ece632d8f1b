//! Recording update checks: what is written, once, and what is refused.

use std::time::Duration;

use fleet_store::gates::Pool;
use fleet_store::questions::Scope;
use fleet_store::{Check, Recorded};
use rollout_model::evidence::Evidence;
use rollout_model::time::SignedDuration;

use crate::support::{HOUR, Store, check, on_both_stores};

on_both_stores!(
    a_change_of_version_is_recorded_once_whichever_engine_saw_it,
    async |store: Store| {
        // a and b on 4.18.1; a moves to 4.18.2 within the same batch.
        let recorded = store
            .first
            .record(
                &[
                    check("a", "4.18.1", 10.0, 100),
                    check("b", "4.18.1", 60.0, 110),
                    check("a", "4.18.2", 10.0, 10 * HOUR + 5),
                ],
                u64::MAX,
            )
            .await
            .unwrap();
        assert_eq!(
            recorded,
            Recorded {
                clusters: 2,
                new_clusters: 2,
                changes: 1,
                unchanged: 0,
                refused_new: 0,
            }
        );
        // Both engines see b move to 4.18.2 (it asked each once): one change.
        for handle in [&store.first, &store.second] {
            handle
                .record(&[check("b", "4.18.2", 60.0, 11 * HOUR)], u64::MAX)
                .await
                .unwrap();
        }
        let (_, changes) = store.second.history("b").await.unwrap().unwrap();
        assert_eq!(changes.len(), 1);
        let arrivals = store.first.arrivals("4.18.2").await.unwrap();
        assert_eq!(arrivals.len(), 2);
    }
);

on_both_stores!(
    a_check_older_than_the_stored_one_changes_nothing,
    async |store: Store| {
        store
            .first
            .record(&[check("a", "4.18.2", 10.0, 200)], u64::MAX)
            .await
            .unwrap();
        let late = store
            .second
            .record(&[check("a", "4.18.1", 10.0, 100)], u64::MAX)
            .await
            .unwrap();
        assert_eq!((late.clusters, late.changes), (0, 0));
        let (row, changes) = store.first.history("a").await.unwrap().unwrap();
        assert_eq!(
            (row.version.as_str(), changes.len()),
            ("4.18.2", 0),
            "never put back on a version it left"
        );
    }
);

on_both_stores!(
    checks_saying_nothing_new_wait_for_the_seen_step_but_a_new_version_is_settled_at_once,
    async |store: Store| {
        let store = store
            .first
            .with_seen_step(Duration::from_secs(HOUR as u64))
            .with_evidence(Evidence {
                established_after: SignedDuration::from_hours(24),
                settled_after: SignedDuration::from_mins(10),
            });
        let written = |recorded: Recorded| (recorded.clusters, recorded.unchanged);
        let record = |checks: Vec<Check>| {
            let store = store.clone();
            async move { store.record(&checks, u64::MAX).await.unwrap() }
        };
        assert_eq!(
            written(record(vec![check("s", "4.18.1", 1.0, 100)]).await),
            (1, 0)
        );
        assert_eq!(
            written(record(vec![check("s", "4.18.1", 1.0, 200)]).await),
            (0, 1),
            "still here, within the hour"
        );
        assert_eq!(
            written(record(vec![check("s", "4.18.1", 1.0, 100 + HOUR)]).await),
            (1, 0),
            "an hour on"
        );
        let moved = record(vec![check("s", "4.18.2", 1.0, 110 + HOUR)]).await;
        assert_eq!((moved.clusters, moved.changes), (1, 1), "a new version at once");
        assert_eq!(
            written(record(vec![check("s", "4.18.2", 1.0, 110 + HOUR + 300)]).await),
            (0, 1),
            "five minutes on: not settled yet, nothing new"
        );
        assert_eq!(
            written(record(vec![check("s", "4.18.2", 1.0, 110 + HOUR + 600)]).await),
            (1, 0),
            "ten minutes on: the check that settles the version is written"
        );
        let (row, _) = store.history("s").await.unwrap().unwrap();
        assert_eq!(row.last_seen - row.version_since, 600);
        let mut elsewhere = check("s", "4.18.2", 1.0, 120 + 2 * HOUR);
        elsewhere.channel = "fast-4.18".into();
        assert_eq!(
            written(record(vec![elsewhere]).await),
            (1, 0),
            "a new channel at once"
        );
    }
);

on_both_stores!(
    new_clusters_are_taken_within_their_budget_and_known_ones_always,
    async |store: Store| {
        store
            .first
            .record(&[check("known", "4.18.1", 1.0, 100)], u64::MAX)
            .await
            .unwrap();
        let checks: Vec<Check> = (0..5)
            .map(|number| check(&format!("new-{number}"), "4.18.1", 1.0, 200))
            .chain([check("known", "4.18.2", 1.0, 200)])
            .collect();
        let recorded = store.second.record(&checks, 2).await.unwrap();
        assert_eq!(
            (recorded.clusters, recorded.new_clusters, recorded.refused_new),
            (3, 2, 3)
        );
        assert_eq!(store.first.cluster_count().await.unwrap(), 3);
        let refused = store
            .second
            .record(&[check("new-4", "4.18.1", 1.0, 300)], 0)
            .await
            .unwrap();
        assert_eq!(refused.refused_new, 1, "no budget, no new cluster");
        let (row, _) = store.first.history("known").await.unwrap().unwrap();
        assert_eq!(
            row.version, "4.18.2",
            "a known cluster is written whatever the budget"
        );
    }
);

on_both_stores!(every_cluster_written_has_its_secret_lot, async |store: Store| {
    let record = |cluster: &str, at| check(cluster, "4.18.1", 1.0, at);
    store
        .first
        .record(&[record("a", 0), record("b", 0)], u64::MAX)
        .await
        .unwrap();
    store
        .first
        .record(&[record("a", 48 * HOUR), record("b", 48 * HOUR)], u64::MAX)
        .await
        .unwrap();
    let versions = [("stable-4.18".to_owned(), "amd64".to_owned(), "4.18.1".to_owned())];
    let pool = Pool {
        versions: &versions,
        active_since: 0,
        below: 100.0,
    };
    let candidates = store.second.candidates("4.18.52", pool, 0, 10).await.unwrap();
    assert_eq!(candidates.len(), 2);
    for candidate in &candidates {
        assert_eq!(
            candidate.lot,
            store.first.lot(&candidate.cluster),
            "the engines share the key"
        );
    }
    assert!(
        candidates[0].lot.bits() <= candidates[1].lot.bits(),
        "in the order of lots"
    );
});

on_both_stores!(
    an_id_sent_once_does_not_stay_for_the_whole_retention,
    async |store: Store| {
        let record = |cluster: &str, at| check(cluster, "4.18.1", 1.0, at);
        store
            .first
            .record(&[record("minted", 0), record("real", 0)], u64::MAX)
            .await
            .unwrap();
        store
            .first
            .record(&[record("real", 25 * HOUR)], u64::MAX)
            .await
            .unwrap();
        let pruned = store.first.prune(-1, 26 * HOUR).await.unwrap();
        assert_eq!(pruned.clusters, 1, "never established, not seen for a day");
        assert!(store.first.history("minted").await.unwrap().is_none());
        assert!(store.first.history("real").await.unwrap().is_some());
        let everyone = Scope::default();
        assert_eq!(
            store.first.versions(&everyone, &[], 0).await.unwrap()[0].clusters,
            1
        );
    }
);

on_both_stores!(a_big_batch_is_split_into_statements, async |store: Store| {
    let checks: Vec<Check> = (0..2_500)
        .map(|number| check(&format!("cluster-{number}"), "4.18.1", 1.0, 1))
        .collect();
    assert_eq!(
        store.first.record(&checks, u64::MAX).await.unwrap().clusters,
        2_500
    );
    let moved: Vec<Check> = checks
        .iter()
        .map(|check| Check {
            version: "4.18.2".into(),
            at: 2,
            ..check.clone()
        })
        .collect();
    assert_eq!(
        store.second.record(&moved, u64::MAX).await.unwrap().changes,
        2_500
    );
});

on_both_stores!(
    engines_recording_the_same_clusters_at_once_count_each_change_once,
    async |store: Store| {
        let clusters: Vec<String> = (0..300).map(|number| format!("cluster-{number}")).collect();
        let on = |version: &str, at| -> Vec<Check> {
            clusters
                .iter()
                .map(|cluster| check(cluster, version, 1.0, at))
                .collect()
        };
        store.first.record(&on("4.18.1", 100), u64::MAX).await.unwrap();
        let moved = on("4.18.2", 200);
        let reversed: Vec<Check> = moved.iter().rev().cloned().collect();
        let (one, other) = tokio::join!(
            store.first.record(&moved, u64::MAX),
            store.second.record(&reversed, u64::MAX),
        );
        assert_eq!(one.unwrap().changes + other.unwrap().changes, 300);
        for cluster in &clusters {
            let (row, changes) = store.first.history(cluster).await.unwrap().unwrap();
            assert_eq!((row.version.as_str(), changes.len()), ("4.18.2", 1), "{cluster}");
        }
    }
);
