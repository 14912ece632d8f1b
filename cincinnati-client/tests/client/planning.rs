//! Update paths on a small graph shaped like OpenShift's: stable channels
//! per minor holding the previous minor too, EUS channels on even minors.

use std::collections::BTreeSet;

use cincinnati_client::Tier;
use cincinnati_client::plan::{Break, Offers, PathAnswer, PathQuery, Plan, other_tiers, plan};

use crate::support::{Fixture, v};

const S14: &[&str] = &[
    "stable-4.14",
    "stable-4.15",
    "stable-4.16",
    "eus-4.14",
    "eus-4.16",
];
const S15: &[&str] = &["stable-4.15", "stable-4.16", "eus-4.16"];
const S16: &[&str] = &["fast-4.16", "stable-4.16", "eus-4.16"];

/// 4.14.0–3, 4.15.0–2, 4.16.0–2 and 4.16.3 (fast only). In 4.14 every
/// release updates to every later one; 4.15.1 → 4.15.2, 4.16.0 → 4.16.1,
/// 4.16.2 → 4.16.3; 4.14.2–3 update to 4.15.0–2, 4.15.1 to 4.16.0–2,
/// 4.15.2 to 4.16.0–1. 4.15.0 updates to nothing.
fn fixture() -> Fixture {
    Fixture::new()
        .releases("4.14", 3, S14)
        .releases("4.15", 2, S15)
        .releases("4.16", 2, S16)
        .release("4.16.3", &["fast-4.16"])
        .updates(&["4.14.0"], &["4.14.1", "4.14.2", "4.14.3"])
        .updates(&["4.14.1"], &["4.14.2", "4.14.3"])
        .update("4.14.2", "4.14.3")
        .update("4.15.1", "4.15.2")
        .update("4.16.0", "4.16.1")
        .updates(&["4.14.2", "4.14.3"], &["4.15.0", "4.15.1", "4.15.2"])
        .updates(&["4.15.1"], &["4.16.0", "4.16.1", "4.16.2"])
        .updates(&["4.15.2"], &["4.16.0", "4.16.1"])
        .update("4.16.2", "4.16.3")
}

fn query(from: &str, to: &str, tier: Tier) -> PathQuery {
    PathQuery {
        from: v(from),
        to: v(to),
        tier,
        accepted_risks: BTreeSet::new(),
        alternatives: 0,
    }
}

/// `from → to @channel`, risky updates marked `!`.
fn hops(plan: &Plan) -> Vec<String> {
    plan.hops
        .iter()
        .map(|hop| {
            let risky = if hop.risks.is_some() { "!" } else { "" };
            format!(
                "{} → {}{risky} @{}",
                hop.from.version, hop.to.version, hop.channel
            )
        })
        .collect()
}

fn found(answer: &PathAnswer) -> Vec<String> {
    match answer {
        PathAnswer::Found { plan, .. } => hops(plan),
        PathAnswer::NoPath { reason, .. } => panic!("no path: {reason:?}"),
    }
}

#[test]
fn the_plan_has_the_fewest_updates_then_the_newest_releases() {
    let graph = fixture().graph();
    assert_eq!(
        found(&plan(&graph, &query("4.14.0", "4.16.2", Tier::Stable))),
        [
            "4.14.0 → 4.14.3 @stable-4.14",
            "4.14.3 → 4.15.1 @stable-4.15",
            "4.15.1 → 4.16.2 @stable-4.16"
        ],
        "4.15.2 is newer, but has no update to 4.16.2"
    );
    assert_eq!(
        found(&plan(&graph, &query("4.14.0", "4.16.1", Tier::Stable)))[1],
        "4.14.3 → 4.15.2 @stable-4.15"
    );
}

#[test]
fn eus_plans_stay_on_even_minors_channels() {
    let graph = fixture().graph();
    assert_eq!(
        found(&plan(&graph, &query("4.14.2", "4.16.1", Tier::Eus))),
        ["4.14.2 → 4.15.2 @eus-4.16", "4.15.2 → 4.16.1 @eus-4.16"]
    );
    assert_eq!(
        query("4.14.2", "4.16.1", Tier::Eus).channels(),
        ["eus-4.14", "eus-4.16"]
    );
}

#[test]
fn risky_updates_are_avoided_unless_their_risks_are_accepted() {
    let graph = fixture().risky("4.15.2", "4.16.2", "Flaky").graph();
    let mut asked = query("4.14.2", "4.16.2", Tier::Stable);
    assert_eq!(
        found(&plan(&graph, &asked)),
        ["4.14.2 → 4.15.1 @stable-4.15", "4.15.1 → 4.16.2 @stable-4.16"]
    );
    asked.accepted_risks.insert("Flaky".into());
    assert_eq!(
        found(&plan(&graph, &asked)),
        ["4.14.2 → 4.15.2 @stable-4.15", "4.15.2 → 4.16.2! @stable-4.16"]
    );
}

#[test]
fn without_a_safe_plan_the_risky_one_is_offered_with_its_risks() {
    let graph = fixture()
        .risky("4.15.2", "4.16.2", "Flaky")
        .risky("4.16.1", "4.16.2", "Flaky")
        .graph();
    let asked = query("4.15.2", "4.16.2", Tier::Stable);
    let answer = plan(&graph, &asked);
    let PathAnswer::NoPath { reason, with_risks } = answer else {
        panic!("a path without accepting Flaky: {answer:?}");
    };
    assert!(
        matches!(
            reason,
            Break::Stuck {
                offers: Offers::OnlyConditional,
                ..
            }
        ),
        "{reason:?}"
    );
    assert_eq!(
        reason.summary(&asked),
        "4.16.1 has only conditional updates in stable-4.16, with risks not accepted; \
         no update that may be taken leads to 4.16.2"
    );
    let risky = with_risks.expect("a plan taking Flaky");
    assert_eq!(risky.risks, ["Flaky"]);
    assert_eq!(hops(&risky.plan), ["4.15.2 → 4.16.2! @stable-4.16"]);
}

#[test]
fn alternatives_of_the_same_length_follow_the_best_plan_in_order() {
    let graph = fixture().graph();
    let mut asked = query("4.14.2", "4.16.0", Tier::Stable);
    asked.alternatives = 10;
    let PathAnswer::Found {
        plan: best,
        alternatives,
    } = plan(&graph, &asked)
    else {
        panic!("no path");
    };
    let all: Vec<Vec<String>> = std::iter::once(&best).chain(&alternatives).map(hops).collect();
    assert_eq!(
        all,
        [
            vec!["4.14.2 → 4.15.2 @stable-4.15", "4.15.2 → 4.16.0 @stable-4.16"],
            vec!["4.14.2 → 4.15.1 @stable-4.15", "4.15.1 → 4.16.0 @stable-4.16"],
        ]
    );
    asked.alternatives = 0;
    let PathAnswer::Found { alternatives, .. } = plan(&graph, &asked) else {
        panic!("no path");
    };
    assert!(alternatives.is_empty());
}

#[test]
fn a_missing_update_is_reported_where_it_stops_with_the_nearest_release_that_has_one() {
    let graph = fixture().graph();
    let asked = query("4.15.0", "4.16.2", Tier::Stable);
    let PathAnswer::NoPath { reason, with_risks } = plan(&graph, &asked) else {
        panic!("4.15.0 updates to nothing");
    };
    assert_eq!(with_risks, None);
    assert_eq!(
        reason.summary(&asked),
        "4.15.0 has no update in stable-4.16 yet; the nearest release that has one is 4.15.1"
    );
}

#[test]
fn a_target_outside_its_channel_says_where_it_is() {
    let graph = fixture().graph();
    let asked = query("4.16.2", "4.16.3", Tier::Stable);
    let PathAnswer::NoPath { reason, .. } = plan(&graph, &asked) else {
        panic!("4.16.3 is not in stable");
    };
    assert_eq!(
        reason.summary(&asked),
        "4.16.3 is not in stable-4.16 yet (it is in fast-4.16)"
    );
    assert_eq!(
        found(&plan(&graph, &query("4.16.2", "4.16.3", Tier::Fast))),
        ["4.16.2 → 4.16.3 @fast-4.16"]
    );
}

#[test]
fn impossible_questions_say_why() {
    let graph = fixture().release_of("arm64", "4.17.0", &["stable-4.17"]).graph();
    let reason = |from: &str, to: &str, tier: Tier| {
        let asked = query(from, to, tier);
        match plan(&graph, &asked) {
            PathAnswer::NoPath { reason, .. } => reason.summary(&asked),
            found => panic!("{found:?}"),
        }
    };
    for ((from, to, tier), why) in [
        (
            ("4.16.0", "4.15.1", Tier::Stable),
            "4.15.1 is older than 4.16.0: clusters do not downgrade",
        ),
        (
            ("4.16.0", "4.17.0", Tier::Stable),
            "4.17.0 is not released for this architecture (only for arm64)",
        ),
        (("4.16.0", "4.19.0", Tier::Stable), "4.19.0 is not a release"),
        (("4.15.1", "4.16.1", Tier::Fast), "no release is in fast-4.15"),
        (
            ("4.14.3", "4.16.1", Tier::Candidate),
            "no release is in candidate-4.14",
        ),
    ] {
        assert_eq!(reason(from, to, tier), why);
    }
    assert!(matches!(
        plan(&graph, &query("4.16.1", "4.16.1", Tier::Stable)),
        PathAnswer::Found { plan, .. } if plan.hops.is_empty()
    ));
}

#[test]
fn a_downgrade_is_refused_before_any_graph_is_read() {
    assert_eq!(
        query("4.16.68", "4.14.30", Tier::Stable).refused(),
        Some(Break::NotNewer)
    );
    assert_eq!(query("4.14.30", "4.16.68", Tier::Eus).refused(), None);
    assert_eq!(
        query("4.16.1", "4.16.1", Tier::Stable).refused(),
        None,
        "already there"
    );
}

#[test]
fn where_updates_stop_comes_with_the_way_there_and_the_way_on() {
    // 4.15.0 updates to nothing; 4.15.1 is the nearest release with an
    // update leading on.
    let graph = fixture().graph();
    let asked = query("4.14.2", "4.16.2", Tier::Stable);
    let asked_stuck = query("4.15.0", "4.16.2", Tier::Stable);
    let PathAnswer::NoPath {
        reason:
            Break::Stuck {
                at,
                nearest,
                reached,
                onward,
                ..
            },
        ..
    } = plan(&graph, &asked_stuck)
    else {
        panic!("4.15.0 updates to nothing");
    };
    assert_eq!(at.version, v("4.15.0"));
    assert!(reached.hops.is_empty(), "stuck at the start");
    assert_eq!(nearest.map(|release| release.version.clone()), Some(v("4.15.1")));
    let onward = onward.expect("the way on from 4.15.1");
    assert_eq!(hops(&onward), ["4.15.1 → 4.16.2 @stable-4.16"]);
    // A plan found is unchanged by all this.
    assert_eq!(found(&plan(&graph, &asked)).len(), 2);
}

#[test]
fn each_hop_lists_the_releases_it_may_take_instead() {
    let graph = fixture().graph();
    let mut asked = query("4.14.2", "4.16.0", Tier::Stable);
    asked.alternatives = 10;
    let PathAnswer::Found { plan: best, .. } = plan(&graph, &asked) else {
        panic!("no path");
    };
    assert_eq!(
        hops(&best),
        ["4.14.2 → 4.15.2 @stable-4.15", "4.15.2 → 4.16.0 @stable-4.16"]
    );
    let instead: Vec<Vec<String>> = best
        .instead
        .iter()
        .map(|releases| {
            releases
                .iter()
                .map(|release| release.version.to_string())
                .collect()
        })
        .collect();
    // 4.15.1 also updates to 4.16.0; 4.15.0 updates to nothing. The last
    // hop's target is the plan's.
    assert_eq!(instead, [vec!["4.15.1".to_owned()], vec![]]);
    asked.alternatives = 0;
    let PathAnswer::Found { plan: best, .. } = plan(&graph, &asked) else {
        panic!("no path");
    };
    assert!(best.instead.is_empty(), "only when asked for");
}

#[test]
fn without_a_plan_the_other_tiers_are_asked() {
    let graph = fixture().graph();
    let asked = query("4.16.2", "4.16.3", Tier::Stable);
    let others = other_tiers(&graph, &asked);
    let tiers: Vec<(Tier, usize, Vec<&str>)> = others
        .iter()
        .map(|other| (other.tier, other.plan.hops.len(), other.risks.clone()))
        .collect();
    assert_eq!(tiers, [(Tier::Fast, 1, vec![])], "4.16.3 is in fast-4.16 only");
    let risky = fixture().risky("4.16.2", "4.16.3", "Flaky").graph();
    let others = other_tiers(&risky, &asked);
    assert_eq!(
        others[0].risks,
        ["Flaky"],
        "a plan that needs a risk accepted says which"
    );
}
