//! `graph-data preview` lists the updates each channel phases, their
//! windows and where `--at` falls in them; against `--base`, those the
//! change phases anew and those whose window it moves. On the small
//! phased graph-data of `support::phased`, served by a server that builds
//! the base at the preview's moment.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::phased::{STARTED, write_phased, write_phased_releases, write_served};
use crate::support::{EVERY_DOCUMENT, Run, cincinnati, documented_fields, keys};

/// 4.18.2 in stable-4.18 from the beginning, not phased.
const UNPHASED: &str = "- 4.18.2\n";
/// 4.18.2 phased in a day earlier than [`STARTED`].
const A_DAY_EARLIER: &str = "- name: 4.18.2\n  start: 2025-06-01T09:00:00Z\n";

/// A change to preview: the graph-data after it and before it (the base),
/// the releases both apply to, and a server serving the base.
struct Preview {
    work: tempfile::TempDir,
    at: String,
}

impl Preview {
    /// 4.18.2's entry is `changed` after the change and `base` before it;
    /// the preview and the server are at `at`.
    fn of(changed: &str, base: &str, at: &str) -> Self {
        let work = tempfile::tempdir().unwrap();
        write_phased(&work.path().join("changed"), changed);
        write_phased(&work.path().join("base"), base);
        let releases = write_phased_releases(work.path());
        let base = work.path().join("base");
        write_served(&work.path().join("served.json"), &base, &releases, at);
        Self {
            work,
            at: at.to_owned(),
        }
    }

    fn path(&self, name: &str) -> String {
        let path: PathBuf = self.work.path().join(name);
        path.display().to_string()
    }

    /// `graph-data preview` of the change at its moment, with `extra`.
    fn run(&self, extra: &[&str]) -> Run {
        let (served, changed, releases) = (
            self.path("served.json"),
            self.path("changed"),
            self.path("releases.json"),
        );
        let mut args = vec![
            "--graph",
            &served,
            "graph-data",
            "preview",
            &changed,
            "--releases",
            &releases,
            "--at",
            &self.at,
        ];
        args.extend_from_slice(extra);
        cincinnati(&args)
    }

    /// [`Preview::run`] against the base, with `extra`.
    fn against_base(&self, extra: &[&str]) -> Run {
        let base = self.path("base");
        self.run(&[&["--base", base.as_str()], extra].concat())
    }
}

/// The JSON of the update from `from` into 4.18.2 in stable-4.18 phased
/// in from 2025-06-02 09:00, with `state` at the preview's moment, before
/// any comparison with a base.
fn phased(from: &str, state: &str) -> Value {
    let (kind, duration, end) = match from {
        "4.17.9" => ("minor", "P14D", "2025-06-16T09:00:00Z"),
        "4.18.1" => ("patch", "P2D", "2025-06-04T09:00:00Z"),
        _ => unreachable!("no update from {from} is phased"),
    };
    json!({
        "channel": "stable-4.18",
        "from": from,
        "to": "4.18.2",
        "kind": kind,
        "duration": duration,
        "start": "2025-06-02T09:00:00Z",
        "end": end,
        "state": state,
        "new": null,
        "movedFrom": null,
    })
}

/// `update` with `field` set to `value`.
fn with(mut update: Value, field: &str, value: Value) -> Value {
    update[field] = value;
    update
}

/// The two updates into 4.18.2 from stable-4.18's releases, recommended
/// and conditional, and not the one from 4.16.0 (in no channel) nor any in
/// fast-4.18 (which does not phase); both ends of a window are in it:
/// (at, the minor update's state, the patch update's).
#[test]
fn preview_lists_the_phased_updates_and_where_the_moment_falls_in_their_windows() {
    for (at, minor, patch) in [
        ("2025-06-01T00:00:00Z", "before", "before"),
        ("2025-06-02T09:00:00Z", "inside", "inside"),
        ("2025-06-04T09:00:00Z", "inside", "inside"),
        ("2025-06-10T00:00:00Z", "inside", "after"),
        ("2025-07-01T00:00:00Z", "after", "after"),
    ] {
        let run = Preview::of(STARTED, STARTED, at).run(&["-o", "json"]);
        assert_eq!(run.code, 0, "the server serves this graph-data at {at}: {run:?}");
        assert_eq!(
            run.json()["phased"],
            json!([phased("4.17.9", minor), phased("4.18.1", patch)]),
            "at {at}"
        );
    }
}

#[test]
fn the_preview_s_moment_is_an_rfc_3339_time() {
    let preview = Preview::of(STARTED, STARTED, "2025-06-01T00:00:00Z");
    let run = preview.run(&["--at", "tomorrow"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("'--at <TIME>'"), "{}", run.stderr);
}

/// Against the base, each phased update is new (the base did not phase
/// it), moved (the base phased it with another window: the base's is
/// given) or neither; a change that phases anew or moves a window is a
/// change even when the graph served at the moment stays the same:
/// (base's entry, at, exit code, the updates from 4.17.9 and 4.18.1).
#[test]
fn against_a_base_phased_updates_are_marked_new_or_moved() {
    let unchanged = |from| with(phased(from, "before"), "new", json!(false));
    let moved = |from, end| {
        let rollout = json!({"duration": phased(from, "before")["duration"], "start": "2025-06-01T09:00:00Z", "end": end});
        with(unchanged(from), "movedFrom", rollout)
    };
    let before_all = "2025-05-01T00:00:00Z";
    for (base, at, code, expected) in [
        (
            UNPHASED,
            "2025-06-03T00:00:00Z",
            1,
            [
                with(phased("4.17.9", "inside"), "new", json!(true)),
                with(phased("4.18.1", "inside"), "new", json!(true)),
            ],
        ),
        (
            A_DAY_EARLIER,
            before_all,
            1,
            [
                moved("4.17.9", "2025-06-15T09:00:00Z"),
                moved("4.18.1", "2025-06-03T09:00:00Z"),
            ],
        ),
        (STARTED, before_all, 0, [unchanged("4.17.9"), unchanged("4.18.1")]),
    ] {
        let run = Preview::of(STARTED, base, at).against_base(&["-o", "json"]);
        assert_eq!(run.code, code, "{base} at {at}: {run:?}");
        assert_eq!(run.json()["phased"], json!(expected), "{base} at {at}");
    }
}

#[test]
fn the_table_has_a_section_per_phasing_channel_saying_what_the_change_does() {
    let preview = Preview::of(STARTED, A_DAY_EARLIER, "2025-05-01T00:00:00Z");
    let run = preview.against_base(&[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        "No differences.\n\
         \n\
         Phased updates in stable-4.18 at 2025-05-01T00:00:00Z\n  \
         FROM    TO      KIND   DURATION  START                 END                   STATE   CHANGE\n  \
         4.17.9  4.18.2  minor  P14D      2025-06-02T09:00:00Z  2025-06-16T09:00:00Z  before  \
         moved (was 2025-06-01T09:00:00Z to 2025-06-15T09:00:00Z)\n  \
         4.18.1  4.18.2  patch  P2D       2025-06-02T09:00:00Z  2025-06-04T09:00:00Z  before  \
         moved (was 2025-06-01T09:00:00Z to 2025-06-03T09:00:00Z)\n"
    );
    assert_eq!(
        run.stderr,
        "cincinnati: the change phases updates anew or moves their windows\n"
    );
}

#[test]
fn a_channel_without_phasing_lists_no_phased_update() {
    let preview = Preview::of(STARTED, STARTED, "2025-06-03T00:00:00Z");
    let json = preview.run(&["--channel", "fast-4.18", "-o", "json"]).json();
    assert_eq!(json["phased"], json!([]));
    let text = preview.run(&["--channel", "fast-4.18"]);
    assert_eq!(text.stdout, "No differences.\n", "{text:?}");
}

/// `Preview` has no golden JSON document: its fields, and a phased
/// update's, are held to docs/cli.md's table here.
#[test]
fn a_preview_and_a_phased_update_have_the_documented_fields() {
    let preview = Preview::of(STARTED, A_DAY_EARLIER, "2025-06-03T00:00:00Z");
    let json = preview.against_base(&["-o", "json"]).json();
    let mut documented = documented_fields("`Preview`");
    documented.extend(EVERY_DOCUMENT.map(str::to_owned));
    assert_eq!(keys(&json), documented);
    assert_eq!(keys(&json["phased"][0]), documented_fields("— phased update"));
    assert_eq!(
        keys(&json["phased"][0]["movedFrom"]),
        ["duration", "start", "end"].map(str::to_owned).into(),
        "docs/cli.md: `movedFrom` (`{{duration, start, end}}`)"
    );
}
