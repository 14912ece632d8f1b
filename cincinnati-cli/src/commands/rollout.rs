//! `cincinnati rollout`: a policy-engine's rollouts under run-time control,
//! from its status port (`{prefix}/v1/rollouts`, with a bearer token of the
//! engine's `rollouts.token_file`): each rollout where the engine's rollout
//! model says it is, the audit of the changes, and the changes themselves.
//! Every answer is a `cincinnati_client::rollout::Rollouts` document (a
//! change answers the rollouts after it), printed as received with
//! `-o json` and `-o yaml` (`history TARGET`: with that target's rollout and
//! changes only).

use cincinnati_client::rollout::{AuditEntry, Rollouts};
use http_fetch::Method;

use super::rollouts_table::{percent, rollouts_table};
use super::status_port::{Answers, EngineDocument, StatusPort, does_not_exist};
use crate::cli::{Common, Format, RolloutArgs, RolloutCommand};
use crate::input::Input;
use crate::outcome::{Answer, Failure};
use crate::output::{self, BAD, Cell, HEADING, Text, count, styled};

/// Where the rollouts' control is.
const ANSWERS: Answers = Answers {
    command: "rollout",
    flag: "--rollouts-url",
    route: "/v1/rollouts",
    what: "the rollout control",
    missing: "no rollout control there. A policy-engine answers {prefix}/v1/rollouts on its \
              status port only with rollouts.token_file in its settings (and fleet.store, \
              where the rollouts' state is kept, and cluster_policy.file, where they are \
              declared); when it has them, --rollouts-url names its status port and prefix",
};

/// The changes `list` shows after the rollouts, the last ones (`history`
/// shows every one the engine answers with).
const CHANGES_SHOWN: usize = 5;

impl EngineDocument for Rollouts {
    const KIND: &'static str = "Rollouts";
}

pub async fn run(
    input: &Input,
    common: &Common,
    args: &RolloutArgs,
    format: Format,
) -> Result<Answer, Failure> {
    let control = StatusPort::new(
        input,
        common,
        &ANSWERS,
        args.rollouts_url.as_deref(),
        args.token.token_file.as_deref(),
    )?;
    let answered = match &args.action {
        RolloutCommand::List(_) => Answered::Document(control.ask(&[], &[]).await?, Table::List),
        RolloutCommand::History(asked) => history(control.ask(&[], &[]).await?, asked.target.as_deref()),
        RolloutCommand::Pause(asked) => change(&control, &asked.target, Change::Pause(&asked.reason)).await?,
        RolloutCommand::Resume(asked) => {
            change(&control, &asked.target, Change::Resume(&asked.reason)).await?
        }
        RolloutCommand::Hold(asked) => {
            let held = Change::Hold(&asked.change.reason, asked.percent);
            change(&control, &asked.change.target, held).await?
        }
        RolloutCommand::Release(asked) => {
            change(&control, &asked.target, Change::Release(&asked.reason)).await?
        }
    };
    let (document, table) = match answered {
        Answered::Document(document, table) => (document, table),
        Answered::No(why) => return Ok(Answer::No(why)),
    };
    output::print(format, &document, |text| match table {
        Table::List => list_table(text, &document),
        Table::History(target) => history_table(text, &document, target),
        Table::Changed(target) => changed_table(text, &document, target),
    })?;
    Ok(Answer::Yes)
}

/// Makes `change` to the rollout of `target`: the rollouts after it (the
/// engine answers 202 for a pause its store has not taken yet: in force
/// on that engine, written when the store can).
async fn change<'a>(
    control: &StatusPort<'_>,
    target: &'a str,
    change: Change<'_>,
) -> Result<Answered<'a>, Failure> {
    let (method, action, parameters) = change.request();
    let response = control.send(method, &[target, action], &parameters).await?;
    if let Some(why) = does_not_exist(&response) {
        return Ok(Answered::No(format!("cannot {} {target}: {why}", change.verb())));
    }
    Ok(Answered::Document(
        control.read(response)?,
        Table::Changed(target),
    ))
}

/// The changes in `document`, of every rollout or of `target`'s (with its
/// rollout): no when the engine has neither a rollout nor a change of it.
fn history(mut document: Rollouts, target: Option<&str>) -> Answered<'_> {
    let Some(target) = target else {
        return Answered::Document(document, Table::History(None));
    };
    document.rollouts.retain(|rollout| rollout.target == target);
    document.history.retain(|entry| entry.target == target);
    if document.rollouts.is_empty() && document.history.is_empty() {
        return Answered::No(format!(
            "the engine has no rollout of {target} and no change of one recorded"
        ));
    }
    Answered::Document(document, Table::History(Some(target)))
}

/// What the engine answered.
enum Answered<'a> {
    /// The rollouts, and what their table shows.
    Document(Rollouts, Table<'a>),
    /// No: why.
    No(String),
}

/// What the table of an answer shows.
enum Table<'a> {
    List,
    /// The changes, of every rollout or of one.
    History(Option<&'a str>),
    /// The rollouts after a change of this one.
    Changed(&'a str),
}

/// A change of a rollout, and why.
enum Change<'a> {
    Pause(&'a str),
    Resume(&'a str),
    Hold(&'a str, f64),
    Release(&'a str),
}

impl Change<'_> {
    fn verb(&self) -> &'static str {
        match self {
            Change::Pause(_) => "pause",
            Change::Resume(_) => "resume",
            Change::Hold(..) => "hold",
            Change::Release(_) => "release",
        }
    }

    /// How it is asked: the method, the route under the target, and the
    /// parameters.
    fn request(&self) -> (Method, &'static str, Vec<(&'static str, Option<String>)>) {
        let reason = |reason: &str| ("reason", Some(reason.to_owned()));
        match *self {
            Change::Pause(why) => (Method::POST, "pause", vec![reason(why)]),
            Change::Resume(why) => (Method::POST, "resume", vec![reason(why)]),
            Change::Hold(why, percent) => (
                Method::PUT,
                "progress",
                vec![reason(why), ("percent", Some(percent.to_string()))],
            ),
            Change::Release(why) => (Method::PUT, "progress", vec![reason(why)]),
        }
    }
}

/// The rollouts, then the last changes.
fn list_table(text: &mut Text, document: &Rollouts) {
    knowledge(text, document);
    rollouts_table(text, &document.header.generated_at, &document.rollouts);
    text.blank();
    let changes = &document.history;
    if changes.is_empty() {
        text.line("No change made at run time.");
        return;
    }
    let shown = &changes[changes.len().saturating_sub(CHANGES_SHOWN)..];
    let of = if shown.len() < changes.len() {
        format!(
            "{} of {}; rollout history lists them all",
            shown.len(),
            changes.len()
        )
    } else {
        count(changes.len() as u64, "change", "changes")
    };
    text.line(format!(
        "{} ({of}), oldest first:",
        styled(HEADING, "Last changes")
    ));
    changes_table(text, shown);
}

/// The changes, of every rollout or of `target`'s.
fn history_table(text: &mut Text, document: &Rollouts, target: Option<&str>) {
    let of = target.map_or_else(|| "the rollouts".to_owned(), |target| target.to_owned());
    if document.history.is_empty() {
        text.line(format!("No change of {of} made at run time."));
        return;
    }
    text.line(format!(
        "{} of {of} at run time, oldest first:",
        styled(HEADING, count(document.history.len() as u64, "change", "changes"))
    ));
    changes_table(text, &document.history);
}

/// What a change left: the rollout's state, then every rollout.
fn changed_table(text: &mut Text, document: &Rollouts, target: &str) {
    if let Some(rollout) = document.rollouts.iter().find(|rollout| rollout.target == target) {
        text.line(format!("{}: {}", styled(HEADING, target), rollout.said));
        text.blank();
    }
    list_table(text, document);
}

/// What the engine knows of the rollouts' run-time state, when it is not
/// all: nothing read yet, the store unreachable, pauses not written yet.
fn knowledge(text: &mut Text, document: &Rollouts) {
    let state = &document.state;
    if state.known == "unknown" {
        text.line(styled(
            BAD,
            "The engine has not read the rollouts' run-time state: it offers no rollout's target \
             to anyone its policy file alone would let in.",
        ));
    }
    if let Some(error) = &state.error {
        let as_of = state
            .as_of
            .as_ref()
            .map_or_else(String::new, |at| format!(" (it last read it at {at})"));
        text.line(styled(BAD, format!("The store cannot be read{as_of}: {error}")));
    }
    if !state.pending.is_empty() {
        text.line(styled(
            BAD,
            format!(
                "Pauses in force on this engine, not written to the store yet (other engines do \
                 not know them): {}",
                state.pending.join(", ")
            ),
        ));
    }
    if state.known == "unknown" || state.error.is_some() || !state.pending.is_empty() {
        text.blank();
    }
}

fn changes_table(text: &mut Text, changes: &[AuditEntry]) {
    let rows = changes
        .iter()
        .map(|change| {
            let action = match change.held_progress {
                Some(held) if change.action == "hold" => format!("hold at {}", percent(held)),
                _ => change.action.clone(),
            };
            vec![
                Cell::plain(&change.at),
                Cell::plain(&change.target),
                Cell::plain(action),
                Cell::plain(&change.by),
                Cell::plain(&change.reason),
            ]
        })
        .collect();
    text.table(&["AT", "TARGET", "ACTION", "BY", "REASON"], rows);
}
