//! Graph-data N times today's, for benchmarks of how the services' costs
//! grow with the graph.
//!
//! Copy 0 is the source as it is. Copy k (1 ≤ k < N) repeats its channels,
//! blocked edges and raw metadata with every major M moved to
//! M + k × [`MAJOR_STEP`]: `stable-4.18` becomes `stable-14.18`, listing
//! 14.16.0 and on; `4.18.3.yaml` becomes `14.18.3.yaml`, blocking
//! `to: 14.18.3` from `14[.]17[.].*`.
//! Risks and their matching rules are kept as they are. No update crosses
//! copies (see [`crate::generate`]), so each copy's blocked edges act on its
//! own releases only, even an unanchored `4[.]17[.].*` of copy 0, which
//! would match `14.17.1` too.
//!
//! Files are rewritten line by line, knowing graph-data's shapes: a
//! top-level `name`, `to`, `from` or `fixedIn`, a feeder's `filter`, and
//! list items (channel versions and tombstones). The tests check that the
//! result loads with N times everything, and that each copy's updates meet
//! the rules (blocks, risks) their originals meet.

use std::path::Path;

use anyhow::Context as _;

use crate::channel_versions;

/// How far apart the copies' majors are: 1 would collide with 5.0
/// (`candidate-5.0`); 10 keeps copy k's versions readable as k, then the
/// original.
pub const MAJOR_STEP: u64 = 10;

const CHANNELS: &str = "channels";
const BLOCKED_EDGES: &str = "blocked-edges";
const RAW_METADATA: &str = "raw/metadata.json";

/// Writes graph-data `scale` times `source`'s into `target`, which must not
/// exist. `source`'s majors must be below [`MAJOR_STEP`].
pub fn write_scaled_graph_data(source: &Path, scale: u64, target: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(scale >= 1, "a scale of at least 1");
    let highest = channel_versions(source)?
        .last()
        .map_or(0, |version| version.major);
    anyhow::ensure!(
        highest < MAJOR_STEP,
        "{} lists major {highest}: copies would collide from major {MAJOR_STEP} on",
        source.display()
    );
    copy_dir(source, target)?;
    let shifts = || (1..scale).map(|copy| Shift(copy * MAJOR_STEP));
    for (dir, rewrite) in [
        (CHANNELS, Shift::channel_file as Rewrite),
        (BLOCKED_EDGES, Shift::blocked_edge_file),
    ] {
        for entry in std::fs::read_dir(source.join(dir)).with_context(|| format!("reading {dir}"))? {
            let path = entry?.path();
            let name = path
                .file_name()
                .and_then(|name| name.to_str())
                .context("file name")?;
            let text =
                std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
            for shift in shifts() {
                // A channel's file is named for it; a blocked edge's starts
                // with its `to`.
                let name = match dir {
                    CHANNELS => shift.channel_name(name),
                    _ => shift.version(name),
                };
                write_new(&target.join(dir).join(name), rewrite(shift, &text))?;
            }
        }
    }
    let raw = source.join(RAW_METADATA);
    if raw.exists() {
        let text = std::fs::read_to_string(&raw).with_context(|| format!("reading {}", raw.display()))?;
        let original: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", raw.display()))?;
        let mut scaled = original.clone();
        for shift in shifts() {
            scaled.extend(shift.raw_metadata(&original));
        }
        std::fs::write(target.join(RAW_METADATA), serde_json::to_vec_pretty(&scaled)?)?;
    }
    Ok(())
}

/// Copies the files under `source` to `target`, which must not exist.
fn copy_dir(source: &Path, target: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(target.parent().context("target has no parent")?)?;
    std::fs::create_dir(target).with_context(|| format!("creating {}", target.display()))?;
    for entry in std::fs::read_dir(source).with_context(|| format!("reading {}", source.display()))? {
        let entry = entry?;
        let to = target.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to)?;
        } else {
            std::fs::copy(entry.path(), &to).with_context(|| format!("writing {}", to.display()))?;
        }
    }
    Ok(())
}

/// Writes a file that must not exist: two copies naming one file would
/// lose one of them silently.
fn write_new(path: &Path, content: String) -> anyhow::Result<()> {
    use std::io::Write as _;
    std::fs::File::create_new(path)
        .and_then(|mut file| file.write_all(content.as_bytes()))
        .with_context(|| format!("writing {}", path.display()))
}

/// Moves majors up by this much.
#[derive(Debug, Clone, Copy)]
struct Shift(u64);

/// How a line's value is rewritten.
type Rewrite = fn(Shift, &str) -> String;

impl Shift {
    /// `text` with the number it starts with moved (`4.18.3+amd64` →
    /// `14.18.3+amd64`); text that starts otherwise is unchanged.
    fn version(self, text: &str) -> String {
        let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
        match text[..digits].parse::<u64>() {
            Ok(major) => format!("{}{}", major + self.0, &text[digits..]),
            Err(_) => text.to_owned(),
        }
    }

    /// A channel's name (or its file's): the version after the last `-`.
    fn channel_name(self, name: &str) -> String {
        match name.rsplit_once('-') {
            Some((kind, version)) => format!("{kind}-{}", self.version(version)),
            None => name.to_owned(),
        }
    }

    /// A release regex with every major moved: the first number of the
    /// pattern and of each alternative of a group opened where a major
    /// was due (`^(4[.]16[.].*|4[.]17[.][0-9])`), not the minors of
    /// `4[.](17[.].*|18[.][0-9])`. Character classes and escapes are
    /// copied as they are.
    fn pattern(self, pattern: &str) -> String {
        let mut out = String::with_capacity(pattern.len() + 8);
        // Whether a number here is a major; for each open group, whether
        // one was due where it opened.
        let mut major_due = true;
        let mut groups = Vec::new();
        let mut rest = pattern;
        while let Some(c) = rest.chars().next() {
            let taken = match c {
                '0'..='9' => {
                    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
                    if major_due {
                        out.push_str(&self.version(&rest[..digits]));
                    } else {
                        out.push_str(&rest[..digits]);
                    }
                    major_due = false;
                    digits
                }
                '^' => 1,
                '(' => {
                    groups.push(major_due);
                    1
                }
                '|' => {
                    major_due = groups.last().copied().unwrap_or(true);
                    1
                }
                ')' => {
                    groups.pop();
                    major_due = false;
                    1
                }
                '\\' => {
                    major_due = false;
                    rest.chars().nth(1).map_or(1, |escaped| 1 + escaped.len_utf8())
                }
                '[' => {
                    major_due = false;
                    // A `]` first in the class (after any `^`) is literal.
                    let opening = if rest[1..].starts_with('^') { 2 } else { 1 };
                    rest.get(opening + 1..)
                        .and_then(|class| class.find(']'))
                        .map_or(rest.len(), |end| opening + 1 + end + 1)
                }
                _ => {
                    major_due = false;
                    c.len_utf8()
                }
            };
            if !c.is_ascii_digit() {
                out.push_str(&rest[..taken]);
            }
            rest = &rest[taken..];
        }
        out
    }

    /// Rewrites the value of each line starting with one of `rules`'
    /// prefixes (spaces before the value kept); other lines are copied.
    fn lines(self, text: &str, rules: &[(&str, Rewrite)]) -> String {
        let mut out = String::with_capacity(text.len() + text.len() / 16);
        for line in text.split_inclusive('\n') {
            let rule = rules
                .iter()
                .find_map(|&(prefix, rewrite)| Some((prefix, line.strip_prefix(prefix)?, rewrite)));
            match rule {
                Some((prefix, value, rewrite)) => {
                    let (value, end) = value
                        .strip_suffix('\n')
                        .map_or((value, ""), |value| (value, "\n"));
                    let spaces = value.len() - value.trim_start().len();
                    out.push_str(prefix);
                    out.push_str(&value[..spaces]);
                    out.push_str(&rewrite(self, &value[spaces..]));
                    out.push_str(end);
                }
                None => out.push_str(line),
            }
        }
        out
    }

    /// `channels/<name>.yaml`: its name, versions, tombstones and feeder filter.
    fn channel_file(self, text: &str) -> String {
        self.lines(
            text,
            &[
                ("name:", Self::channel_name),
                ("- ", Self::version),
                ("  filter:", Self::pattern),
            ],
        )
    }

    /// `blocked-edges/<file>.yaml`: its target, sources and fix.
    fn blocked_edge_file(self, text: &str) -> String {
        self.lines(
            text,
            &[
                ("to:", Self::version),
                ("from:", Self::pattern),
                ("fixedIn:", Self::version),
            ],
        )
    }

    /// `raw/metadata.json`'s entries, keyed by release, their values lists
    /// of releases (`previous.add`: `4.1.0-rc.4,4.1.0-rc.9`).
    fn raw_metadata(
        self,
        original: &serde_json::Map<String, serde_json::Value>,
    ) -> serde_json::Map<String, serde_json::Value> {
        let releases = |list: &str| {
            list.split(',')
                .map(|release| self.version(release.trim()))
                .collect::<Vec<_>>()
                .join(",")
        };
        original
            .iter()
            .map(|(release, entries)| {
                let mut entries = entries.clone();
                for value in entries
                    .as_object_mut()
                    .into_iter()
                    .flat_map(|map| map.values_mut())
                {
                    if let Some(list) = value.as_str() {
                        *value = releases(list).into();
                    }
                }
                (self.version(release), entries)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use cincinnati_core::Version;
    use openshift_graph_data::{GraphData, GraphDataFiles, Strictness};

    use super::*;
    use crate::{Settings, generate, present_day_graph, testdata_graph_data};

    fn load(dir: &Path) -> GraphData {
        let files = GraphDataFiles::from_dir(dir).unwrap();
        GraphData::load(&files, &Strictness::default())
            .unwrap()
            .graph_data
    }

    #[test]
    fn versions_and_channel_names_move_their_major() {
        let shift = Shift(10);
        assert_eq!(shift.version("4.18.3"), "14.18.3");
        assert_eq!(shift.version("4.3.29+ppc64le"), "14.3.29+ppc64le");
        assert_eq!(
            shift.version("4.10.14-release-data.yaml"),
            "14.10.14-release-data.yaml"
        );
        assert_eq!(shift.version("README"), "README");
        assert_eq!(shift.channel_name("candidate-5.0"), "candidate-15.0");
        assert_eq!(shift.channel_name("stable-4.18.yaml"), "stable-14.18.yaml");
    }

    #[test]
    fn patterns_move_majors_not_minors() {
        let shift = Shift(20);
        for (pattern, moved) in [
            (".*", ".*"),
            ("4[.]17[.].*", "24[.]17[.].*"),
            (r"4\.8\..*", r"24\.8\..*"),
            ("4.8.*", "24.8.*"),
            (
                "^4[.](17[.](1[0-9]|[0-9])|18[.][0-9])[+].*$",
                "^24[.](17[.](1[0-9]|[0-9])|18[.][0-9])[+].*$",
            ),
            (
                "^(4[.]16[.].*|4[.]17[.][0-5])[+].*$",
                "^(24[.]16[.].*|24[.]17[.][0-5])[+].*$",
            ),
            ("4[.]5[.].*|4[.]6[.][0]", "24[.]5[.].*|24[.]6[.][0]"),
            ("(4[.]1|4[.]2)[.][0-9].*", "(24[.]1|24[.]2)[.][0-9].*"),
            (
                "4[.]4[.](1[0-9]|2[0-9]) # 4.4.10+",
                "24[.]4[.](1[0-9]|2[0-9]) # 4.4.10+",
            ),
            (
                r"4\.[0-9]+\.[0-9]+(.*hotfix.*|\+amd64|-s390x)?",
                r"24\.[0-9]+\.[0-9]+(.*hotfix.*|\+amd64|-s390x)?",
            ),
            ("[]4](4)", "[]4](4)"),
        ] {
            assert_eq!(shift.pattern(pattern), moved, "{pattern}");
        }
    }

    #[test]
    fn files_are_rewritten_line_by_line() {
        let shift = Shift(10);
        assert_eq!(
            shift.channel_file(
                "feeder:\n  filter: 4[.](17|18)[.][0-9].*\n  name: stable\nname: stable-4.18\n\
                 versions:\n# no 4.16.1: pulled\n- 4.16.0\n- 4.16.2\n"
            ),
            "feeder:\n  filter: 14[.](17|18)[.][0-9].*\n  name: stable\nname: stable-14.18\n\
             versions:\n# no 4.16.1: pulled\n- 14.16.0\n- 14.16.2\n"
        );
        assert_eq!(
            shift.blocked_edge_file(
                "to: 4.11.0\nfrom:  4[.]10[.].*\nfixedIn: 4.11.2\nurl: https://x/4.11\nname: A\n"
            ),
            "to: 14.11.0\nfrom:  14[.]10[.].*\nfixedIn: 14.11.2\nurl: https://x/4.11\nname: A\n"
        );
    }

    /// The scaled directory as the services load it: N times the channels,
    /// versions, blocked edges, risks and raw metadata, and N times the
    /// generated releases.
    #[test]
    fn scaled_graph_data_loads_with_n_times_everything() {
        const SCALE: usize = 3;
        let source = testdata_graph_data();
        let work = tempfile::tempdir().unwrap();
        let scaled = work.path().join("graph-data");
        write_scaled_graph_data(&source, SCALE as u64, &scaled).unwrap();

        let (original, loaded) = (load(&source), load(&scaled));
        assert_eq!(loaded.channels().len(), SCALE * original.channels().len());
        assert_eq!(loaded.blocks().len(), SCALE * original.blocks().len());
        assert_eq!(loaded.risks().len(), SCALE * original.risks().len());
        assert_eq!(loaded.raw_metadata().len(), SCALE * original.raw_metadata().len());
        let listed = |data: &GraphData| -> usize {
            data.channels().iter().map(|channel| channel.versions.len()).sum()
        };
        assert_eq!(listed(&loaded), SCALE * listed(&original));

        let (versions, scaled_versions) = (
            channel_versions(&source).unwrap(),
            channel_versions(&scaled).unwrap(),
        );
        assert_eq!(scaled_versions.len(), SCALE * versions.len());
        let settings = Settings::default();
        assert_eq!(
            generate(&scaled_versions, &settings).len(),
            SCALE * generate(&versions, &settings).len()
        );
        assert!(
            write_scaled_graph_data(&source, 2, &scaled).is_err(),
            "the target exists"
        );
    }

    /// Every update of today's graph meets, in each copy, the rules
    /// (blocks and risks) its original meets: the rewriting moved every
    /// major that matters, and only majors.
    #[test]
    fn each_copy_meets_the_rules_of_the_original() {
        let source = testdata_graph_data();
        let work = tempfile::tempdir().unwrap();
        let scaled = work.path().join("graph-data");
        write_scaled_graph_data(&source, 2, &scaled).unwrap();
        let (original, loaded) = (load(&source), load(&scaled));
        let shift = Shift(MAJOR_STEP);
        let moved = |version: &Version| Version {
            major: version.major + MAJOR_STEP,
            ..version.clone()
        };
        let rules = |data: &GraphData, from: &Version, to: &Version| -> Vec<String> {
            data.declarations_for(from, to)
                .map(|declaration| declaration.origin().path.clone())
                .collect()
        };
        let graph = present_day_graph(&Settings::default()).unwrap();
        let mut differing = Vec::new();
        for (from, to) in graph.edges() {
            let (from, to) = (
                &graph.release(from).unwrap().version,
                &graph.release(to).unwrap().version,
            );
            let expected: Vec<String> = rules(&original, from, to)
                .iter()
                .map(|path| {
                    let (dir, name) = path.split_once('/').unwrap();
                    format!("{dir}/{}", shift.version(name))
                })
                .collect();
            let found = rules(&loaded, &moved(from), &moved(to));
            if found != expected {
                differing.push((from.to_string(), to.to_string(), expected, found));
            }
        }
        assert!(differing.is_empty(), "{differing:#?}");
    }
}
