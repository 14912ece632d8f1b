//! What the fleet answers are made of: counts grouped in the store, and
//! rows only where an answer lists clusters.

use fleet_store::questions::{Change, HourCount, Offered, Scope};
use fleet_store::store::HISTORY_CHANGES;

use crate::support::{HOUR, Store, check, on_both_stores};

/// a (placed at 10) and b (at 60) on 4.18.1, moving to 4.18.2 at 10 h and
/// 11 h; c on 4.17.9, seen once, long ago.
async fn fleet(store: &Store) {
    let write =
        |checks: Vec<fleet_store::Check>| async move { store.first.record(&checks, u64::MAX).await.unwrap() };
    write(vec![
        check("a", "4.18.1", 10.0, 100),
        check("b", "4.18.1", 60.0, 110),
    ])
    .await;
    write(vec![check("a", "4.18.2", 10.0, 10 * HOUR + 5)]).await;
    write(vec![check("b", "4.18.2", 60.0, 11 * HOUR)]).await;
    store
        .second
        .record(&[check("c", "4.17.9", 90.0, 50)], u64::MAX)
        .await
        .unwrap();
}

on_both_stores!(
    versions_are_counted_with_places_and_settled_clusters_in_one_scan,
    async |store: Store| {
        fleet(&store).await;
        let versions = store
            .first
            .versions(&Scope::default(), &[50.0, 70.0], 11 * HOUR)
            .await
            .unwrap();
        let summary: Vec<(&str, u64, &[u64], u64)> = versions
            .iter()
            .map(|count| {
                (
                    count.version.as_str(),
                    count.clusters,
                    count.below_places.as_slice(),
                    count.settled,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [("4.17.9", 1, &[0, 0][..], 1), ("4.18.2", 2, &[1, 2][..], 1)]
        );
        let active = Scope {
            active_since: HOUR,
            ..Scope::default()
        };
        let versions = store.second.versions(&active, &[], 0).await.unwrap();
        assert_eq!(versions.len(), 1, "c is not active within the window");
        assert_eq!(versions[0].oldest_since, 10 * HOUR + 5);
        let elsewhere = Scope {
            channel: Some("fast-4.18"),
            ..Scope::default()
        };
        assert!(store.first.versions(&elsewhere, &[], 0).await.unwrap().is_empty());
    }
);

on_both_stores!(
    arrivals_are_counted_per_hour_and_listed_with_how_each_cluster_is_now,
    async |store: Store| {
        fleet(&store).await;
        assert_eq!(
            store.first.adoption("4.18.2", 0).await.unwrap(),
            [
                HourCount {
                    hour: 10 * HOUR,
                    clusters: 1
                },
                HourCount {
                    hour: 11 * HOUR,
                    clusters: 1
                }
            ]
        );
        let mut arrivals = store.first.arrivals("4.18.2").await.unwrap();
        arrivals.sort_by_key(|arrival| arrival.at);
        let summary: Vec<(&str, f64, i64, Option<i64>)> = arrivals
            .iter()
            .map(|arrival| {
                (
                    arrival.cluster.as_str(),
                    arrival.place,
                    arrival.version_since,
                    arrival.admitted_at_ms,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [("a", 10.0, 10 * HOUR + 5, None), ("b", 60.0, 11 * HOUR, None)]
        );
    }
);

on_both_stores!(a_clusters_history_is_its_last_changes, async |store: Store| {
    fleet(&store).await;
    let (a, changes) = store.second.history("a").await.unwrap().expect("a is stored");
    assert_eq!(
        (a.first_seen, a.last_seen, a.version_since),
        (100, 10 * HOUR + 5, 10 * HOUR + 5)
    );
    assert_eq!(
        changes,
        [Change {
            from: "4.18.1".into(),
            to: "4.18.2".into(),
            at: 10 * HOUR + 5
        }]
    );
    assert!(store.second.history("nobody").await.unwrap().is_none());
    // A cluster reporting a new version every minute: only the last
    // changes are kept and shown.
    let before = store.rows("fleet_changes").await;
    let flapping: Vec<fleet_store::Check> = (0..(HISTORY_CHANGES as i64 + 50))
        .map(|minute| check("f", &format!("4.18.{minute}"), 1.0, 60 * minute))
        .collect();
    store.first.record(&flapping[..60], u64::MAX).await.unwrap();
    store.second.record(&flapping[60..], u64::MAX).await.unwrap();
    assert_eq!(
        store.rows("fleet_changes").await - before,
        i64::from(HISTORY_CHANGES)
    );
    let (_, changes) = store.first.history("f").await.unwrap().unwrap();
    assert_eq!(changes.len(), HISTORY_CHANGES as usize);
    assert_eq!(
        changes.last().unwrap().to,
        format!("4.18.{}", HISTORY_CHANGES + 49),
        "the last ones, oldest first"
    );
});

on_both_stores!(
    clusters_that_have_not_moved_are_listed_longest_first,
    async |store: Store| {
        fleet(&store).await;
        // A repeated check keeps the time the cluster came to its version.
        store
            .first
            .record(&[check("a", "4.18.2", 10.0, 20 * HOUR)], u64::MAX)
            .await
            .unwrap();
        let group = Scope {
            channel: Some("stable-4.18"),
            arch: Some("amd64"),
            ..Scope::default()
        };
        let stuck = store
            .first
            .unmoved(&group, "4.18.2", 11 * HOUR, 10)
            .await
            .unwrap();
        let stuck: Vec<&str> = stuck.iter().map(|row| row.cluster.as_str()).collect();
        assert_eq!(stuck, ["a"], "b came to 4.18.2 at 11h, a at 10h");
    }
);

on_both_stores!(
    a_rollout_counts_only_established_clusters_it_offered_by_a_time,
    async |store: Store| {
        // old1, old2: seen for two days on 4.18.1, placed at 10 and 60; fresh:
        // placed at 5, first seen an hour ago; moved: established, now on the
        // target.
        let now = 72 * HOUR;
        let write = |cluster: &str, version: &str, place, at| check(cluster, version, place, at);
        store
            .first
            .record(
                &[
                    write("old1", "4.18.1", 10.0, 0),
                    write("old2", "4.18.1", 60.0, 0),
                    write("moved", "4.18.1", 20.0, 0),
                    write("fresh", "4.18.1", 5.0, now - HOUR),
                ],
                u64::MAX,
            )
            .await
            .unwrap();
        store
            .first
            .record(
                &[
                    write("old1", "4.18.1", 10.0, now),
                    write("old2", "4.18.1", 60.0, now),
                    write("moved", "4.18.52", 20.0, now),
                    write("fresh", "4.18.1", 5.0, now),
                ],
                u64::MAX,
            )
            .await
            .unwrap();
        let takers = [("stable-4.18".to_owned(), "amd64".to_owned(), "4.18.1".to_owned())];
        let offered = store
            .second
            .offered_by("4.18.52", &takers, (now - HOUR, now), 50.0)
            .await
            .unwrap();
        assert_eq!(
            offered,
            Offered {
                offered: 2,
                arrived: 1
            },
            "old1 and moved: below 50, established; fresh is not"
        );
    }
);
