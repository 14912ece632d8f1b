//! `--help` describes every command, subcommand, flag and value: the
//! command list is a golden file (`tests/golden/help.txt`;
//! `CINCINNATI_BLESS=1` rewrites it), and every entry of every command's
//! help has a description.

use crate::support::golden::GoldenFiles;
use crate::support::{Run, cincinnati_with};

/// `cincinnati` with the help as wide as it is without a terminal,
/// whatever `COLUMNS` the tests run with.
fn cincinnati(args: &[&str]) -> Run {
    cincinnati_with(args, &[("COLUMNS", "100")])
}

/// Every command and subcommand, as typed.
const COMMANDS: [&[&str]; 26] = [
    &[],
    &["updates"],
    &["path"],
    &["explain"],
    &["channels"],
    &["render"],
    &["diff"],
    &["graph-data"],
    &["graph-data", "check"],
    &["graph-data", "preview"],
    &["signatures"],
    &["signatures", "verify"],
    &["fleet"],
    &["fleet", "versions"],
    &["fleet", "adoption"],
    &["fleet", "rollouts"],
    &["fleet", "stuck"],
    &["fleet", "cluster"],
    &["rollout"],
    &["rollout", "list"],
    &["rollout", "history"],
    &["rollout", "pause"],
    &["rollout", "resume"],
    &["rollout", "hold"],
    &["rollout", "release"],
    &["completions"],
];

/// The entries of a short help (`-h`) without a description: in its
/// `Commands:`, `Arguments:` and `Options:` sections, each entry is a line
/// of the name (with its value; indented by two spaces, six for a long
/// option without a short one), two spaces or more and the description,
/// which goes on in lines indented to the description's column.
fn undescribed(help: &str) -> Vec<String> {
    let mut in_entries = false;
    let mut missing = Vec::new();
    for line in help.lines() {
        if !line.starts_with(' ') {
            in_entries = matches!(line, "Commands:" | "Arguments:" | "Options:");
            continue;
        }
        let entry = line.trim_start();
        let indent = line.len() - entry.len();
        if in_entries && indent <= 6 {
            let described = entry
                .split_once("  ")
                .is_some_and(|(_, description)| !description.trim().is_empty());
            if !described {
                missing.push(entry.trim().to_owned());
            }
        }
    }
    missing
}

#[test]
fn an_entry_without_a_description_is_found() {
    let help = "Commands:\n  check   Validates\n  preview \n\nArguments:\n  <DIR>\n\nOptions:\n      \
                --from <VERSION>\n      --to <VERSION>  The version\n                      to update to\n  \
                -h, --help      Print help\n";
    assert_eq!(undescribed(help), ["preview", "<DIR>", "--from <VERSION>"]);
}

#[test]
fn every_command_flag_and_argument_is_described() {
    let mut missing = Vec::new();
    for command in COMMANDS {
        let run = cincinnati(&[command, &["-h"]].concat());
        assert_eq!(run.code, 0, "{command:?}: {run:?}");
        assert!(run.stdout.contains("Options:"), "{command:?}: {}", run.stdout);
        missing.extend(
            undescribed(&run.stdout)
                .into_iter()
                .map(|entry| format!("{}: {entry}", command.join(" "))),
        );
    }
    assert!(missing.is_empty(), "no description: {missing:#?}");
}

#[test]
fn tiers_are_listed_with_what_their_channels_hold() {
    let run = cincinnati(&["path", "--help"]);
    assert_eq!(run.code, 0, "{run:?}");
    for tier in ["stable", "fast", "candidate", "eus"] {
        let line = format!("- {tier}:");
        let described = run
            .stdout
            .lines()
            .find(|text| text.trim_start().starts_with(&line))
            .is_some_and(|text| text.contains(&format!("{tier}-X.Y: ")));
        assert!(described, "--tier {tier} is not described:\n{}", run.stdout);
    }
    let wrong = cincinnati(&["path", "--from", "4.16.1", "--to", "4.17.1", "--tier", "beta"]);
    assert_eq!(wrong.code, 2, "{wrong:?}");
    assert!(
        wrong
            .stderr
            .contains("[possible values: stable, fast, candidate, eus]"),
        "{}",
        wrong.stderr
    );
}

#[test]
fn the_command_list_is_what_the_golden_file_holds() {
    let run = cincinnati(&["--help"]);
    assert_eq!(run.code, 0, "{run:?}");
    let mut golden_files = GoldenFiles::default();
    golden_files.check("help.txt", &run.stdout);
    golden_files.assert_same();
}
