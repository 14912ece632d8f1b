//! `cincinnati path`: how to update from one release to another.

use cincinnati_client::UpdateGraph;
use cincinnati_client::json::PathJson;
use cincinnati_client::plan::{PathAnswer, PathQuery, Plan, plan};

use crate::cli::{Format, PathArgs};
use crate::input::Input;
use crate::outcome::{Answer, Failure};
use crate::output::{self, BAD, Cell, GOOD, HEADING, RISK, Text, styled};

pub async fn run(input: &Input, args: &PathArgs, format: Format) -> Result<Answer, Failure> {
    let query = PathQuery {
        from: args.from.clone(),
        to: args.to.clone(),
        tier: args.tier,
        accepted_risks: args.accept_risks.iter().cloned().collect(),
        alternatives: if args.all { args.limit } else { 0 },
    };
    let graph = input
        .graph(&input.fetcher, &input.query(), &query.channels())
        .await?;
    let answer = plan(&graph, &query);
    let document = PathJson::new(&input.arch, &query, &answer);
    output::print(format, &document, |text| table(text, &graph, &query, &answer))?;
    Ok(match &answer {
        PathAnswer::Found { .. } => Answer::Yes,
        PathAnswer::NoPath { reason, .. } => Answer::No(format!(
            "no path from {} to {}: {}",
            query.from,
            query.to,
            reason.summary(&query)
        )),
    })
}

fn table(text: &mut Text, graph: &UpdateGraph, query: &PathQuery, answer: &PathAnswer) {
    let heading = format!(
        "{} → {} on {} ({})",
        query.from,
        query.to,
        query.tier,
        graph.arch()
    );
    match answer {
        PathAnswer::Found { plan, alternatives } => {
            let count = match plan.hops.len() {
                1 => "1 update".to_owned(),
                hops => format!("{hops} updates"),
            };
            text.line(styled(HEADING, format!("{heading}: {count}")));
            text.blank();
            hops(text, plan);
            for (number, alternative) in alternatives.iter().enumerate() {
                text.blank();
                text.line(format!("Alternative {}:", number + 1));
                hops(text, alternative);
            }
        }
        PathAnswer::NoPath { reason, with_risks } => {
            text.line(styled(HEADING, format!("{heading}: no path")));
            text.line(format!("  {}", styled(BAD, reason.summary(query))));
            if let Some(risky) = with_risks {
                text.blank();
                text.line(format!(
                    "Accepting {} gives this plan (--accept-risk {}):",
                    risky.risks.join(", "),
                    risky.risks.join(" --accept-risk ")
                ));
                hops(text, &risky.plan);
            }
        }
    }
}

fn hops(text: &mut Text, plan: &Plan) {
    if plan.hops.is_empty() {
        text.line("  Already there.");
        return;
    }
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
            vec![
                Cell::plain(number + 1),
                Cell::plain(&hop.from.version),
                Cell::plain(&hop.to.version),
                Cell::plain(hop.channel),
                update,
            ]
        })
        .collect();
    text.table(&["#", "FROM", "TO", "CHANNEL", "UPDATE"], rows);
}
