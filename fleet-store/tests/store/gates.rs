//! Gated rollouts as stored: canaries chosen once, each admission of a rate
//! made once and within its period's cap, whichever engines decide them at
//! once; candidates in the rollout's own order of secret lots, established
//! clusters only.

use std::collections::BTreeMap;

use fleet_store::FleetStore;
use fleet_store::changes::Changes;
use fleet_store::gates::Pool;
use rollout_model::gates::Canary;
use rollout_model::rounds::{Admission, Candidate, GateChange};

use crate::support::{HOUR, Store, at, check, on_both_stores};

const TARGET: &str = "4.18.52";

/// Makes the gates' row of the rollout, if missing.
async fn open(store: &FleetStore) {
    store
        .change_rollout(
            TARGET,
            || at(0),
            |_| {
                (
                    Changes {
                        open_gates: true,
                        ..Changes::default()
                    },
                    (),
                )
            },
        )
        .await
        .unwrap();
}

/// Applies `change` at `now`.
async fn apply(store: &FleetStore, change: GateChange, now: i64) {
    store
        .change_rollout(
            TARGET,
            || at(now),
            |_| {
                (
                    Changes {
                        gates: Some(change),
                        ..Changes::default()
                    },
                    (),
                )
            },
        )
        .await
        .unwrap();
}

fn candidate(store: &FleetStore, cluster: &str) -> Candidate {
    Candidate {
        cluster: cluster.to_owned(),
        lot: store.lot(cluster),
        place: 1.0,
    }
}

on_both_stores!(
    canaries_are_chosen_once_whichever_engine_chooses_first,
    async |store: Store| {
        open(&store.first).await;
        let choose = |handle: &FleetStore, clusters: [&str; 2]| GateChange {
            choose: clusters
                .iter()
                .map(|cluster| {
                    let candidate = candidate(handle, cluster);
                    Canary {
                        cluster: candidate.cluster,
                        lot: candidate.lot,
                        place: candidate.place,
                        arrived_at: None,
                    }
                })
                .collect(),
            ..GateChange::default()
        };
        tokio::join!(
            apply(&store.first, choose(&store.first, ["a", "b"]), 100),
            apply(&store.second, choose(&store.second, ["c", "d"]), 100),
        );
        let run_time = store.first.run_time(&[], &BTreeMap::new()).await.unwrap();
        let canaries = run_time.gates[TARGET].canaries.clone().unwrap();
        let chosen: Vec<&str> = canaries
            .members
            .iter()
            .map(|canary| canary.cluster.as_str())
            .collect();
        assert!(
            chosen == ["a", "b"] || chosen == ["c", "d"],
            "{chosen:?}: one choice, whole"
        );
        assert_eq!(canaries.chosen_at, at(100));
        // Their arrival, once, whoever sees it.
        let arrived = |cluster: &str| GateChange {
            arrivals: vec![(cluster.to_owned(), at(200))],
            ..GateChange::default()
        };
        apply(&store.second, arrived(chosen[0]), 200).await;
        apply(&store.first, arrived(chosen[0]), 300).await;
        let run_time = store.second.run_time(&[], &BTreeMap::new()).await.unwrap();
        let arrivals: Vec<_> = run_time.gates[TARGET]
            .canaries
            .as_ref()
            .unwrap()
            .members
            .iter()
            .map(|canary| canary.arrived_at)
            .collect();
        assert_eq!(arrivals, [Some(at(200)), None]);
    }
);

on_both_stores!(
    a_rate_admits_at_most_its_cap_a_period_on_any_number_of_engines,
    async |store: Store| {
        open(&store.first).await;
        let offered_before = vec![candidate(&store.first, "before")];
        apply(
            &store.first,
            GateChange {
                start_rate: Some((at(0), offered_before)),
                ..GateChange::default()
            },
            0,
        )
        .await;
        // Two engines, each with its own view of the candidates (overlapping),
        // admit at once in period 0; then again, and in period 1.
        let admit = |handle: &FleetStore, clusters: &[&str], period: i64| GateChange {
            admit: Some(Admission {
                period,
                period_ends: at((period + 1) * 24 * HOUR),
                cap: 3,
                candidates: clusters
                    .iter()
                    .map(|cluster| candidate(handle, cluster))
                    .collect(),
            }),
            ..GateChange::default()
        };
        tokio::join!(
            apply(&store.first, admit(&store.first, &["a", "b", "c", "d"], 0), 100),
            apply(
                &store.second,
                admit(&store.second, &["c", "d", "e", "before"], 0),
                100
            ),
        );
        apply(&store.second, admit(&store.second, &["f", "g"], 0), 200).await;
        let run_time = store.first.run_time(&[], &BTreeMap::new()).await.unwrap();
        let rate = run_time.gates[TARGET].rate.clone().unwrap();
        assert_eq!((rate.period, rate.in_period, rate.before_rate), (0, 3, 1));
        assert_eq!(
            rate.total, 4,
            "three in the period and one offered before the rate"
        );
        assert_eq!(rate.admitted.len(), 4);
        apply(
            &store.first,
            admit(&store.first, &["a", "f", "g", "h", "i"], 1),
            24 * HOUR + 1,
        )
        .await;
        let run_time = store.second.run_time(&[], &run_time.gates).await.unwrap();
        let rate = run_time.gates[TARGET].rate.clone().unwrap();
        assert_eq!((rate.period, rate.in_period, rate.total), (1, 3, 7));
        assert_eq!(rate.admitted.len(), 7, "read since the last read, added to it");
        for cluster in ["before", "f", "g"] {
            assert!(rate.admitted.contains(store.first.lot(cluster)), "{cluster}");
        }
        let audit = store.first.rollout_audit(Some(TARGET), 10).await.unwrap();
        let said: Vec<&str> = audit.iter().map(|entry| entry.audited.reason.as_str()).collect();
        assert!(
            said.iter().all(|reason| reason.contains("of at most 3")),
            "{said:?}"
        );
    }
);

on_both_stores!(
    candidates_are_established_takers_in_the_rollouts_order_of_lots_never_admitted_twice,
    async |store: Store| {
        let now = 48 * HOUR;
        let clusters = ["a", "b", "c", "d", "e"];
        let first: Vec<_> = clusters
            .iter()
            .map(|cluster| check(cluster, "4.18.1", 10.0, 0))
            .collect();
        let later: Vec<_> = clusters
            .iter()
            .map(|cluster| check(cluster, "4.18.1", 10.0, now))
            .collect();
        store.first.record(&first, u64::MAX).await.unwrap();
        store.first.record(&later, u64::MAX).await.unwrap();
        store
            .first
            .record(&[check("minted", "4.18.1", 0.0001, now)], u64::MAX)
            .await
            .unwrap();
        let takers = [("stable-4.18".to_owned(), "amd64".to_owned(), "4.18.1".to_owned())];
        let pool = Pool {
            versions: &takers,
            active_since: now - HOUR,
            below: 50.0,
        };
        let offset = store.first.lot("c").bits();
        let candidates = store.second.candidates(TARGET, pool, offset, 10).await.unwrap();
        let names: Vec<&str> = candidates
            .iter()
            .map(|candidate| candidate.cluster.as_str())
            .collect();
        assert_eq!(
            names.len(),
            5,
            "{names:?}: the minted id, seen once, is no candidate"
        );
        assert_eq!(names[0], "c", "the rotation starts at its offset");
        let ranks: Vec<u64> = candidates
            .iter()
            .map(|candidate| candidate.lot.rank(offset))
            .collect();
        assert!(ranks.windows(2).all(|pair| pair[0] < pair[1]), "{ranks:?}");
        let below = Pool { below: 5.0, ..pool };
        assert!(
            store
                .second
                .candidates(TARGET, below, offset, 10)
                .await
                .unwrap()
                .is_empty(),
            "placed above"
        );
        // Admitted: no longer a candidate.
        open(&store.first).await;
        apply(
            &store.first,
            GateChange {
                start_rate: Some((at(now), vec![candidate(&store.first, "c")])),
                ..GateChange::default()
            },
            now,
        )
        .await;
        let again = store.second.candidates(TARGET, pool, offset, 10).await.unwrap();
        assert!(again.iter().all(|candidate| candidate.cluster != "c"));
        assert_eq!(again.len(), 4);
    }
);
