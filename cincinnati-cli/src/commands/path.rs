//! `cincinnati path`: how to update from one release to another; an
//! EUS-to-EUS plan as the runbook of Red Hat's Control Plane Only update.

use cincinnati_client::Tier;
use cincinnati_client::json::PathJson;
use cincinnati_client::plan::{Break, PathAnswer, PathQuery, Plan, TierPlan, other_tiers, plan};
use cincinnati_client::runbook::{Runbook, Workers, runbook};

use super::unique;
use crate::cli::{Format, PathArgs};
use crate::input::Input;
use crate::outcome::{Answer, Failure};
use crate::output::{self, BAD, Cell, DIM, GOOD, HEADING, RISK, Text, styled};

pub async fn run(input: &Input, args: &PathArgs, format: Format) -> Result<Answer, Failure> {
    let query = PathQuery {
        from: args.from.clone(),
        to: args.to.clone(),
        tier: args.tier,
        accepted_risks: args.accept_risks.iter().cloned().collect(),
        alternatives: if args.all { args.limit } else { 0 },
    };
    // A question no graph can answer is refused before asking anyone.
    if let Some(reason) = query.refused() {
        let answer = PathAnswer::NoPath {
            reason,
            with_risks: None,
        };
        return print(format, &input.arch, &query, &answer, &[]);
    }
    let graph = input
        .graph(&input.fetcher, &input.query(), &query.channels())
        .await?;
    let answer = plan(&graph, &query);
    if !matches!(answer, PathAnswer::NoPath { .. }) {
        return print(format, graph.arch(), &query, &answer, &[]);
    }
    // No plan on this tier: what the others offer, from a graph holding
    // their channels too (the same graph when it holds them already).
    let channels: Vec<String> = unique(Tier::ALL.into_iter().flat_map(|tier| {
        PathQuery {
            tier,
            ..query.clone()
        }
        .channels()
    }));
    let wider = if channels.iter().all(|channel| graph.covers(channel)) {
        None
    } else {
        Some(input.graph(&input.fetcher, &input.query(), &channels).await?)
    };
    let graph = wider.as_ref().unwrap_or(&graph);
    // Asked again where the other tiers' channels are known too: the break
    // then knows a target that is only in them, as from a full graph.
    let answer = plan(graph, &query);
    let others = other_tiers(graph, &query);
    print(format, graph.arch(), &query, &answer, &others)
}

fn print(
    format: Format,
    arch: &str,
    query: &PathQuery,
    answer: &PathAnswer,
    others: &[TierPlan],
) -> Result<Answer, Failure> {
    let document = PathJson::new(arch, query, answer).with_other_tiers(others);
    output::print(format, &document, |text| table(text, arch, query, answer, others))?;
    Ok(match answer {
        PathAnswer::Found { .. } => Answer::Yes,
        PathAnswer::NoPath { reason, .. } => Answer::No(format!(
            "no path from {} to {}: {}",
            query.from,
            query.to,
            reason.summary(query)
        )),
    })
}

fn table(text: &mut Text, arch: &str, query: &PathQuery, answer: &PathAnswer, others: &[TierPlan]) {
    let heading = format!("{} → {} on {} ({arch})", query.from, query.to, query.tier);
    match answer {
        PathAnswer::Found { plan, .. } => {
            text.line(styled(
                HEADING,
                format!("{heading}: {}", updates(plan.hops.len())),
            ));
            text.blank();
            let runbook = runbook(query, plan);
            hops(text, plan, runbook.as_ref());
            if let Some(runbook) = &runbook {
                steps(text, query, plan, runbook);
            }
        }
        PathAnswer::NoPath { reason, with_risks } => {
            text.line(styled(HEADING, format!("{heading}: no path")));
            text.line(format!("  {}", styled(BAD, reason.summary(query))));
            if let Break::Stuck {
                at, reached, onward, ..
            } = reason
            {
                text.blank();
                match reached.hops.len() {
                    0 => text.line(format!("Updates stop at {}, the start.", at.version)),
                    count => {
                        text.line(format!("Reachable: {} to {}", updates(count), at.version));
                        hops(text, reached, None);
                    }
                }
                if let Some(onward) = onward
                    && let Some(first) = onward.hops.first()
                {
                    text.blank();
                    text.line(format!(
                        "From {} on, {} to {}:",
                        first.from.version,
                        updates(onward.hops.len()),
                        query.to
                    ));
                    hops(text, onward, None);
                }
            }
            if let Some(risky) = with_risks {
                text.blank();
                text.line(format!(
                    "Accepting {} gives this plan ({}):",
                    risky.risks.join(", "),
                    accept_flags(&risky.risks)
                ));
                hops(text, &risky.plan, None);
            }
            other_tier_lines(text, others);
        }
    }
}

fn updates(count: usize) -> String {
    match count {
        1 => "1 update".to_owned(),
        count => format!("{count} updates"),
    }
}

fn accept_flags(risks: &[&str]) -> String {
    risks
        .iter()
        .map(|risk| format!("--accept-risk {risk}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the other tiers offer when this one has no plan.
fn other_tier_lines(text: &mut Text, others: &[TierPlan]) {
    if others.is_empty() {
        return;
    }
    text.blank();
    text.line("Other tiers:");
    for other in others {
        let count = updates(other.plan.hops.len());
        text.line(match other.risks.as_slice() {
            [] => format!("  {}: {count} (--tier {})", other.tier, other.tier),
            risks => format!(
                "  {}: {count}, accepting {} (--tier {} {})",
                other.tier,
                risks.join(", "),
                other.tier,
                accept_flags(risks)
            ),
        });
    }
}

/// The plan's table: with `--all`, the releases each hop may take
/// instead; with a runbook, what the workers do.
fn hops(text: &mut Text, plan: &Plan, runbook: Option<&Runbook>) {
    if plan.hops.is_empty() {
        text.line("  Already there.");
        return;
    }
    let with_instead = plan.instead.iter().any(|instead| !instead.is_empty());
    let rows = plan
        .hops
        .iter()
        .enumerate()
        .map(|(number, hop)| {
            let update = match hop.risks {
                None => Cell::styled(GOOD, "recommended"),
                Some(risks) => {
                    let names: Vec<&str> = risks.iter().map(|risk| risk.name.as_str()).collect();
                    Cell::styled(RISK, format!("risks: {}", names.join(", ")))
                }
            };
            let mut row = vec![
                Cell::plain(number + 1),
                Cell::plain(&hop.from.version),
                Cell::plain(&hop.to.version),
                Cell::plain(hop.channel),
                update,
            ];
            if let Some(runbook) = runbook {
                row.push(match runbook.workers[number] {
                    Workers::Update => Cell::plain("update"),
                    Workers::Skip => Cell::styled(DIM, format!("paused: skip {}", hop.to.version)),
                    Workers::CatchUp { from, to } => {
                        Cell::plain(format!("unpaused after: {} → {}", from.version, to.version))
                    }
                });
            }
            if with_instead {
                let instead: Vec<String> = plan.instead[number]
                    .iter()
                    .map(|release| release.version.to_string())
                    .collect();
                row.push(Cell::styled(DIM, instead.join(", ")));
            }
            row
        })
        .collect();
    let mut header = vec!["#", "FROM", "TO", "CHANNEL", "UPDATE"];
    if runbook.is_some() {
        header.push("WORKERS");
    }
    if with_instead {
        header.push("OR INSTEAD OF TO");
    }
    text.table(&header, rows);
}

/// The runbook's steps, numbered, each with its commands.
fn steps(text: &mut Text, query: &PathQuery, plan: &Plan, runbook: &Runbook) {
    let skipped: Vec<String> = runbook
        .skipped(plan)
        .iter()
        .map(|release| release.version.to_string())
        .collect();
    text.blank();
    text.line(styled(
        HEADING,
        format!(
            "Runbook: Red Hat's Control Plane Only (EUS-to-EUS) update to {}, the worker pools paused \
             through {} (they never run it)",
            query.to,
            skipped.join(", ")
        ),
    ));
    for (number, step) in runbook.steps.iter().enumerate() {
        text.line(format!("{:>3}. {}", number + 1, step.sentence));
        for command in &step.commands {
            text.line(format!("       {}", styled(HEADING, command)));
        }
    }
}
