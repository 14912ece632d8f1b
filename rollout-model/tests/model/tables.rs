//! Rollouts as tables, in the style of rust-analyzer's data-driven tests:
//! each `test_data/*.rollout` file holds cases, each a rollout written in a
//! few lines and the times it is asked about, then `---` and what the
//! model answers. A case whose answer differs fails; `UPDATE_EXPECT=1
//! cargo test -p rollout-model` writes the answers instead (to be read
//! before they are committed).
//!
//! ```text
//! case: a paused rollout offers no more than when it was paused
//! declare: start=2026-11-20T00:00:00Z hours=10 starting=20
//! control: paused=2026-11-20T05:00:00.800Z@60.02 stood=0
//! read: 2026-11-20T08:00:00Z
//! ask: 2026-11-20T08:00:00Z places=59.9,60.1,none lots=7
//! ---
//! (the answer)
//! ```
//!
//! Lines: `declare:` (`start= hours= starting=`, optionally
//! `office=mon-fri/09:00/17:00/Europe/Berlin`, `canary=K`, `rate=N/HOURS`,
//! `timeout=HOURS`); `control:` (`paused=TIME@PROGRESS`, `by=ACTOR`,
//! `stood=SECONDS`, `held=PROGRESS`, `resumed=TIME`); `gates:`
//! (`judged=TIME`, `canaries=TIME/LOT,LOT`, `arrived=TIME`,
//! `paused_before=SECONDS`, `rate=ORIGIN/PERIOD/IN_PERIOD/LOT,LOT`,
//! `waiting=N`); `read:` (the time the state was read; `unknown`;
//! `declared`, the default); `ask:` (a time, `places=` in percent or
//! `none` for a request without an id, `lots=`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rollout_model::control::{Actor, Pause};
use rollout_model::declaration::{CanaryGate, RateGate};
use rollout_model::gates::{Canaries, Canary, RateState};
use rollout_model::office_hours::OfficeHours;
use rollout_model::place::Lots;
use rollout_model::time::{SignedDuration, Timestamp, hours};
use rollout_model::{Control, Declaration, GateState, Lot, Place, Rollout, RunState, Who, describe};

use crate::support::{at, declaration, read};

#[test]
fn every_table_answers_as_written() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "rollout"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no tables in {}", dir.display());
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let answered = answer_all(&text);
        if answered == text {
            continue;
        }
        if update {
            std::fs::write(&file, &answered).unwrap();
        } else {
            failures.push(format!("{}:\n{}", file.display(), diff(&text, &answered)));
        }
    }
    assert!(
        failures.is_empty(),
        "tables that answer otherwise (UPDATE_EXPECT=1 rewrites them):\n{}",
        failures.join("\n")
    );
}

/// The lines that differ, for a failure's message.
fn diff(written: &str, answered: &str) -> String {
    let mut shown = String::new();
    for (line, (want, got)) in written.lines().zip(answered.lines()).enumerate() {
        if want != got {
            writeln!(
                shown,
                "  line {}: written  {want}\n  line {}: answered {got}",
                line + 1,
                line + 1
            )
            .unwrap();
        }
    }
    let (want, got) = (written.lines().count(), answered.lines().count());
    if want != got {
        writeln!(shown, "  {want} lines written, {got} answered").unwrap();
    }
    shown
}

/// The file with every case's answer written after its `---`.
fn answer_all(text: &str) -> String {
    let mut out = String::new();
    let mut case: Vec<&str> = Vec::new();
    let mut skipping = false;
    for line in text.lines() {
        if line.starts_with("case:") {
            if !case.is_empty() {
                out.push_str(&answer(&case));
                out.push('\n');
            }
            case.clear();
            skipping = false;
        }
        if skipping {
            continue;
        }
        if line == "---" {
            skipping = true;
            continue;
        }
        if case.is_empty() && !line.starts_with("case:") {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        case.push(line);
    }
    if !case.is_empty() {
        out.push_str(&answer(&case));
    }
    out
}

/// A case's lines (up to `---`), then `---` and the model's answer.
fn answer(lines: &[&str]) -> String {
    let mut given = String::new();
    let mut declared: Option<Declaration> = None;
    let mut control = Control::default();
    let mut gates: Option<GateState> = None;
    let mut state = "declared".to_owned();
    let mut asks = Vec::new();
    for line in lines
        .iter()
        .map(|line| line.trim_end())
        .filter(|line| !line.is_empty())
    {
        given.push_str(line);
        given.push('\n');
        let (key, value) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("not `key: value`: {line}"));
        let value = value.trim();
        match key {
            "case" | "#" => {}
            "declare" => declared = Some(declare(value)),
            "control" => control = control_of(value),
            "gates" => gates = Some(gates_of(value)),
            "read" => state = value.to_owned(),
            "ask" => asks.push(value.to_owned()),
            _ if key.starts_with('#') => {}
            other => panic!("unknown line `{other}:`"),
        }
    }
    let declaration = Arc::new(declared.expect("a case declares its rollout"));
    let rollout = match state.as_str() {
        "declared" => Rollout::new(declaration, RunState::Declared),
        "unknown" => Rollout::new(declaration, RunState::Unknown),
        as_of => read(&declaration, control, gates, at(as_of)),
    };
    let mut out = given;
    out.push_str("---\n");
    for ask in asks {
        out.push_str(&asked(&rollout, &ask));
    }
    out
}

fn fields(value: &str) -> impl Iterator<Item = (&str, &str)> {
    value.split_whitespace().map(|field| {
        field
            .split_once('=')
            .unwrap_or_else(|| panic!("not `name=value`: {field}"))
    })
}

fn declare(value: &str) -> Declaration {
    let (mut start, mut hours_, mut starting) = (None, None, 0.0);
    let mut more = Vec::new();
    for (name, value) in fields(value) {
        match name {
            "start" => start = Some(at(value)),
            "hours" => hours_ = Some(value.parse::<f64>().unwrap()),
            "starting" => starting = value.parse().unwrap(),
            _ => more.push((name, value)),
        }
    }
    let mut declared = declaration(start.expect("start="), hours_.expect("hours="), starting);
    for (name, value) in more {
        match name {
            "office" => {
                let parts: Vec<&str> = value.split('/').collect();
                let [days, from, to, zone @ ..] = &parts[..] else {
                    panic!("office=DAYS/FROM/TO/ZONE")
                };
                let days: Vec<String> = expand_days(days);
                declared.office_hours = Some(OfficeHours::new(&days, from, to, &zone.join("/")).unwrap());
            }
            "canary" => {
                declared.gates.canary = Some(CanaryGate {
                    clusters: value.parse().unwrap(),
                    group: None,
                })
            }
            "rate" => {
                let (clusters, period) = value.split_once('/').expect("rate=N/HOURS");
                declared.gates.rate = Some(RateGate {
                    clusters: clusters.parse().unwrap(),
                    period: hours(period.parse().unwrap()).unwrap(),
                });
            }
            "timeout" => declared.gates.arrival_timeout = hours(value.parse().unwrap()).unwrap(),
            other => panic!("unknown declare field {other}"),
        }
    }
    declared
}

fn expand_days(days: &str) -> Vec<String> {
    const WEEK: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    match days.split_once('-') {
        Some((first, last)) => {
            let from = WEEK.iter().position(|day| *day == first).unwrap();
            let to = WEEK.iter().position(|day| *day == last).unwrap();
            WEEK[from..=to].iter().map(|day| (*day).to_owned()).collect()
        }
        None => days.split(',').map(str::to_owned).collect(),
    }
}

fn control_of(value: &str) -> Control {
    let mut control = Control::default();
    let mut by = Actor::operator("ops");
    for (name, value) in fields(value) {
        match name {
            "paused" => {
                let (when, progress) = value.split_once('@').expect("paused=TIME@PROGRESS");
                control.pause = Some(Pause {
                    at: at(when),
                    progress: progress.parse().unwrap(),
                    by: by.clone(),
                });
            }
            "by" => {
                by = Actor::operator(value);
                if let Some(pause) = &mut control.pause {
                    pause.by = by.clone();
                }
            }
            "stood" => control.stood_still = SignedDuration::from_secs_f64(value.parse().unwrap()),
            "held" => control.held = Some(value.parse().unwrap()),
            "resumed" => control.resumed_at = Some(at(value)),
            other => panic!("unknown control field {other}"),
        }
    }
    control
}

fn lots(list: &str) -> Vec<Lot> {
    list.split(',')
        .filter(|lot| !lot.is_empty())
        .map(|lot| Lot::from_bits(lot.parse().unwrap()))
        .collect()
}

fn gates_of(value: &str) -> GateState {
    let mut gates = GateState {
        offset: 0,
        judged_at: Timestamp::UNIX_EPOCH,
        canaries: None,
        rate: None,
        waiting: 0,
        before_rate_threshold: None,
    };
    for (name, value) in fields(value) {
        match name {
            "judged" => gates.judged_at = at(value),
            "canaries" => {
                let (chosen, members) = value.split_once('/').expect("canaries=TIME/LOT,LOT");
                gates.canaries = Some(Canaries {
                    chosen_at: at(chosen),
                    members: lots(members)
                        .into_iter()
                        .map(|lot| Canary {
                            cluster: format!("cluster-{}", lot.bits()),
                            lot,
                            place: 0.0,
                            arrived_at: None,
                        })
                        .collect(),
                    arrived_at: None,
                    paused_before_arrival: SignedDuration::ZERO,
                });
            }
            "arrived" => {
                let canaries = gates.canaries.as_mut().expect("canaries= before arrived=");
                canaries.arrived_at = Some(at(value));
                for canary in &mut canaries.members {
                    canary.arrived_at = Some(at(value));
                }
            }
            "paused_before" => {
                gates
                    .canaries
                    .as_mut()
                    .expect("canaries= before paused_before=")
                    .paused_before_arrival = SignedDuration::from_secs_f64(value.parse().unwrap());
            }
            "rate" => {
                let parts: Vec<&str> = value.split('/').collect();
                let [origin, period, in_period, admitted] = &parts[..] else {
                    panic!("rate=ORIGIN/PERIOD/IN_PERIOD/LOTS")
                };
                let admitted = lots(admitted);
                gates.rate = Some(RateState {
                    origin: at(origin),
                    total: admitted.len() as u64,
                    admitted: Lots::new(admitted),
                    period: period.parse().unwrap(),
                    in_period: in_period.parse().unwrap(),
                    before_rate: 0,
                });
            }
            "waiting" => gates.waiting = value.parse().unwrap(),
            other => panic!("unknown gates field {other}"),
        }
    }
    gates
}

/// The model's answer to `ask` (`TIME places=… lots=…`).
fn asked(rollout: &Rollout, ask: &str) -> String {
    let (when, rest) = ask.split_once(' ').unwrap_or((ask, ""));
    let now = at(when);
    let position = rollout.position(now);
    let mut out = format!(
        "{when}: {:?} threshold={:.3} scheduled={:.3} named={}\n",
        position.stage,
        position.threshold,
        position.scheduled,
        position.named.len()
    );
    for (name, list) in fields(rest) {
        for item in list.split(',') {
            let who = match (name, item) {
                ("places", "none") => Who::default(),
                ("places", percent) => Who {
                    place: Some(Place::from_percent(percent.parse().unwrap())),
                    lot: None,
                },
                ("lots", lot) => Who {
                    place: None,
                    lot: Some(Lot::from_bits(lot.parse().unwrap())),
                },
                (other, _) => panic!("unknown ask field {other}"),
            };
            let from = rollout
                .offered_from(who)
                .map_or_else(|| "-".to_owned(), |at| at.to_string());
            let offered = if position.offers(who) { "yes" } else { "no" };
            writeln!(out, "  {name} {item}: offered={offered} from={from}").unwrap();
        }
    }
    writeln!(out, "  said: {}", describe::said(rollout, &position)).unwrap();
    out
}
