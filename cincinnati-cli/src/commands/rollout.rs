//! `cincinnati rollout`: a policy-engine's rollouts under run-time control,
//! from its status port (`{prefix}/v1/rollouts`, with a bearer token of the
//! engine's `rollouts.token_file`): each rollout as control leaves it, the
//! audit of the changes, and the changes themselves. Every answer is a
//! `cincinnati_client::rollout_control::Rollouts` document (a change answers
//! the rollouts after it), printed as received with `-o json` and `-o yaml`
//! (`history TARGET`: with that target's rollout and changes only).

use std::path::Path;

use anyhow::{Context as _, anyhow};
use cincinnati_client::cluster_policy::RolloutControlFacts;
use cincinnati_client::rollout_control::{AuditEntry, ControlledRollout, Rollouts};
use http_fetch::Method;
use http_fetch::{StatusCode, Url};

use super::status_port::{self, Answers, EngineDocument, does_not_exist, route_url};
use crate::cli::{Common, Format, RolloutArgs, RolloutCommand};
use crate::input::Input;
use crate::outcome::{Answer, Failure};
use crate::output::{self, BAD, Cell, DIM, HEADING, RISK, Text, count, hours, styled};

/// Where the rollouts' control is.
const ANSWERS: Answers = Answers {
    command: "rollout",
    flag: "--rollouts-url",
    route: "/v1/rollouts",
    what: "the rollout control",
};

/// The environment variable holding the token when `--token-file` is not
/// given.
const TOKEN_VARIABLE: &str = "CINCINNATI_TOKEN";

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
    let control = Control {
        base: ANSWERS.locate(input, common, args.rollouts_url.as_deref())?,
        token: Token::given(args.token_file.as_deref())?,
        input,
    };
    let answered = match &args.action {
        RolloutCommand::List(_) => Answered::Document(control.rollouts().await?, Table::List),
        RolloutCommand::History(asked) => history(control.rollouts().await?, asked.target.as_deref()),
        RolloutCommand::Pause(asked) => {
            control
                .change(&asked.target, Change::Pause(&asked.reason))
                .await?
        }
        RolloutCommand::Resume(asked) => {
            control
                .change(&asked.target, Change::Resume(&asked.reason))
                .await?
        }
        RolloutCommand::Hold(asked) => {
            let change = Change::Hold(&asked.change.reason, asked.percent);
            control.change(&asked.change.target, change).await?
        }
        RolloutCommand::Release(asked) => {
            control
                .change(&asked.target, Change::Release(&asked.reason))
                .await?
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

/// An engine's rollout control: where it is, the token, the client asking.
struct Control<'a> {
    base: Url,
    token: Option<Token>,
    input: &'a Input,
}

impl Control<'_> {
    /// `GET {base}`: each rollout, and the last changes.
    async fn rollouts(&self) -> Result<Rollouts, Failure> {
        let url = route_url(&self.base, &[], &[]);
        let response = self
            .input
            .send_with_token(Method::GET, &url, self.bearer())
            .await?;
        self.read(response)
    }

    /// Makes `change` to the rollout of `target`: the rollouts after it.
    async fn change<'a>(&self, target: &'a str, change: Change<'_>) -> Result<Answered<'a>, Failure> {
        let (method, action, parameters) = change.request();
        let url = route_url(&self.base, &[target, action], &parameters);
        let response = self.input.send_with_token(method, &url, self.bearer()).await?;
        if let Some(why) = does_not_exist(&response) {
            return Ok(Answered::No(format!("cannot {} {target}: {why}", change.verb())));
        }
        Ok(Answered::Document(self.read(response)?, Table::Changed(target)))
    }

    fn bearer(&self) -> Option<&str> {
        self.token.as_ref().map(|token| token.secret.as_str())
    }

    /// The document the engine answered, or why it did not, with what to
    /// do about a refusal.
    fn read(&self, response: http_fetch::Response) -> Result<Rollouts, Failure> {
        status_port::read(response, |status| match status {
            StatusCode::UNAUTHORIZED => Some(match &self.token {
                None => format!(
                    "no token given: --token-file FILE or the environment variable {TOKEN_VARIABLE} \
                     gives one of the engine's rollouts.token_file"
                ),
                Some(token) => format!(
                    "the token from {} was sent, and did not arrive: something between may drop \
                     the Authorization header",
                    token.from
                ),
            }),
            StatusCode::FORBIDDEN => self.token.as_ref().map(|token| {
                format!(
                    "the token from {} is not one of the engine's rollouts.token_file (which it \
                     reads again when the file changes)",
                    token.from
                )
            }),
            StatusCode::NOT_FOUND => Some(
                "no rollout control there. A policy-engine answers {prefix}/v1/rollouts on its \
                 status port only with rollouts.token_file in its settings (and fleet.store, \
                 where the rollouts' state is kept, and cluster_policy.file, where they are \
                 declared); when it has them, --rollouts-url names its status port and prefix"
                    .to_owned(),
            ),
            _ => None,
        })
    }
}

/// The bearer token sent, and where it was read (for messages: the token
/// itself is never printed).
struct Token {
    secret: String,
    from: String,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

impl Token {
    /// The first token of `--token-file`, else `CINCINNATI_TOKEN` (when
    /// not blank); none without either.
    fn given(file: Option<&Path>) -> Result<Option<Self>, Failure> {
        if let Some(path) = file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading --token-file {}", path.display()))
                .map_err(Failure::input)?;
            let secret = first_token(&text).ok_or_else(|| {
                Failure::input(anyhow!(
                    "--token-file {} holds no token (a line `name token`, or the token alone)",
                    path.display()
                ))
            })?;
            return Ok(Some(Self {
                secret,
                from: format!("--token-file {}", path.display()),
            }));
        }
        let secret = std::env::var(TOKEN_VARIABLE).unwrap_or_default();
        Ok((!secret.trim().is_empty()).then(|| Self {
            secret: secret.trim().to_owned(),
            from: TOKEN_VARIABLE.to_owned(),
        }))
    }
}

/// The first token of a file as the engine's `rollouts.token_file` holds
/// them: a line `name token` or the token alone; blank lines and `#`
/// comments skipped.
fn first_token(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| match line.split_once(char::is_whitespace) {
            Some((_name, token)) => token.trim().to_owned(),
            None => line.to_owned(),
        })
}

/// The rollouts, then the last changes.
fn list_table(text: &mut Text, document: &Rollouts) {
    rollouts_table(text, document);
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
        let (_, state) = state(rollout);
        let last = rollout.control.as_ref().map_or_else(String::new, |control| {
            format!(", by {} at {}: {}", control.by, control.at, control.reason)
        });
        text.line(format!("{}: {state}{last}", styled(HEADING, target)));
        text.blank();
    }
    rollouts_table(text, document);
}

fn rollouts_table(text: &mut Text, document: &Rollouts) {
    if document.rollouts.is_empty() {
        text.line("The engine's policy file declares no rollout.");
        return;
    }
    text.line(format!(
        "{} at {} (progress: the share of clusters offered the target; schedule: what the file alone gives)",
        styled(HEADING, "Rollouts of the policy file"),
        document.header.generated_at
    ));
    text.blank();
    let rows = document
        .rollouts
        .iter()
        .map(|rollout| {
            let (style, state) = state(rollout);
            let control = rollout.control.as_ref();
            let last = |field: fn(&RolloutControlFacts) -> &String| {
                control.map_or_else(|| Cell::styled(DIM, "-"), |control| Cell::plain(field(control)))
            };
            vec![
                Cell::plain(&rollout.target),
                Cell::number(rollout.line),
                Cell::number(percent(rollout.progress)),
                Cell::number(percent(rollout.scheduled_progress)),
                Cell::styled(style, state),
                last(|control| &control.by),
                last(|control| &control.at),
                last(|control| &control.reason),
            ]
        })
        .collect();
    text.table(
        &[
            "TARGET", "LINE", "PROGRESS", "SCHEDULE", "STATE", "BY", "AT", "REASON",
        ],
        rows,
    );
    let gated: Vec<(&String, &String)> = document
        .rollouts
        .iter()
        .filter_map(|rollout| Some((&rollout.target, rollout.gates.as_ref()?)))
        .collect();
    if !gated.is_empty() {
        text.blank();
        text.line(styled(HEADING, "Gates"));
        for (target, gates) in gated {
            text.line(format!("{target}: {gates}"));
        }
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

/// A rollout's state as people read it, and its style: paused, held, or
/// on its schedule (late by the time its clock stood still).
fn state(rollout: &ControlledRollout) -> (anstyle::Style, String) {
    let Some(control) = &rollout.control else {
        return (anstyle::Style::new(), "on schedule".to_owned());
    };
    let held = control.held_progress.map(percent);
    match (control.state.as_str(), held) {
        ("paused", None) => (BAD, "paused".to_owned()),
        ("paused", Some(held)) => (BAD, format!("paused, held at {held}")),
        ("held", Some(held)) => (RISK, format!("held at {held}")),
        ("running", _) if control.stood_still_secs > 0 => (
            anstyle::Style::new(),
            format!(
                "on schedule, {} late",
                hours(control.stood_still_secs as f64 / 3600.0)
            ),
        ),
        ("running", _) => (anstyle::Style::new(), "on schedule".to_owned()),
        (other, _) => (anstyle::Style::new(), other.to_owned()),
    }
}

/// A progress, to a tenth of a percent.
fn percent(progress: f64) -> String {
    format!("{progress:.1}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_token_of_a_file_is_taken_as_the_engine_reads_its_own() {
        assert_eq!(
            first_token("# operators\n\n  ops s3cret-one \nci other\n").as_deref(),
            Some("s3cret-one")
        );
        assert_eq!(first_token("bare-token\n").as_deref(), Some("bare-token"));
        assert_eq!(first_token("ops\tspaced  \n").as_deref(), Some("spaced"));
        assert_eq!(first_token("# none yet\n\n"), None);
    }

    #[test]
    fn a_token_file_without_a_token_is_refused_and_the_token_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "# nothing\n").unwrap();
        let refused = Token::given(Some(&file)).unwrap_err();
        assert!(
            refused
                .error
                .to_string()
                .ends_with("holds no token (a line `name token`, or the token alone)")
        );
        std::fs::write(&file, "ops s3cret\n").unwrap();
        let token = Token::given(Some(&file)).unwrap().unwrap();
        assert_eq!(token.secret, "s3cret");
        assert!(!format!("{token:?}").contains("s3cret"), "{token:?}");
    }
}
