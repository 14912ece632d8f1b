//! docs/ARCHITECTURE.md's code map stays true: every path it names exists,
//! every crate of the workspace has its section, and every top-level module
//! of a crate is named in its crate's section.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md")
}

/// The workspace's members, from the root manifest.
fn members() -> Vec<String> {
    let manifest: toml::Table = std::fs::read_to_string(root().join("Cargo.toml"))
        .expect("Cargo.toml")
        .parse()
        .expect("a TOML manifest");
    manifest["workspace"]["members"]
        .as_array()
        .expect("workspace members")
        .iter()
        .filter_map(|member| member.as_str().map(str::to_owned))
        .filter(|member| member != "workspace-hack")
        .collect()
}

/// The code map's sections: the crates a `### ` heading names in
/// backticks, and the text under it.
fn sections(text: &str) -> Vec<(Vec<String>, String)> {
    let map = &text[text.find("## Code map").expect("a code map")..];
    let map = &map[..map[3..].find("\n## ").map_or(map.len(), |end| end + 3)];
    map.split("\n### ")
        .skip(1)
        .map(|section| {
            let (heading, body) = section.split_once('\n').unwrap_or((section, ""));
            (backticked(heading), body.to_owned())
        })
        .collect()
}

/// The `code spans` of `text`.
fn backticked(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// Whether a code span names a file or directory: a path with a slash or
/// a file name with a source or document extension. Globs (`{a,b}.rs`),
/// URLs, routes (`{prefix}/...`) and Rust paths are not.
fn is_path(span: &str) -> bool {
    let looks_like_file = [".rs", ".md", ".sh", ".toml", ".js", ".lua"]
        .iter()
        .any(|extension| span.ends_with(extension));
    let has_slash = span.contains('/');
    (looks_like_file || has_slash)
        && !span.contains(['{', '}', ' ', '*', '<', '>', '=', ':', '?', '$', '(', '"'])
        && !span.starts_with('/')
        && !span.starts_with('.')
}

/// Names of other projects' files that the document quotes.
const NOT_OURS: [&str; 4] = [
    "gb.toml",                            // upstream graph-builder's configuration
    "mh.toml",                            // upstream metadata-helper's
    "release-manifests/release-metadata", // inside a release image
    "proto/h1/io.rs",                     // hyper's
];

/// Every file and directory of the repository, relative to its root, as
/// `/`-separated components (directories end with `/`).
fn repository_paths() -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.')
                || name == "target"
                || name.starts_with("target-")
                || name == "node_modules"
            {
                continue;
            }
            let path = format!("{prefix}{name}");
            if entry.path().is_dir() {
                out.push(format!("{path}/"));
                walk(&entry.path(), &format!("{path}/"), out);
            } else {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&root(), "", &mut paths);
    paths
}

/// Whether `span` names a path of the repository: one ending with it, a
/// whole component at a time (sections name files relative to their crate,
/// or to the directory a bullet is about).
fn exists(span: &str, paths: &[String]) -> bool {
    NOT_OURS.contains(&span)
        || paths.iter().any(|path| {
            let candidate = path
                .strip_suffix('/')
                .filter(|_| !span.ends_with('/'))
                .unwrap_or(path);
            candidate == span || candidate.ends_with(&format!("/{span}"))
        })
}

#[test]
fn every_path_the_code_map_names_exists() {
    let text = architecture();
    let paths = repository_paths();
    let mut missing = Vec::new();
    for (crates, body) in sections(&text) {
        for span in backticked(&body).into_iter().filter(|span| is_path(span)) {
            if !exists(&span, &paths) {
                missing.push(format!("{span} (section {})", crates.join(", ")));
            }
        }
    }
    // Paths in the rest of the document too.
    let map_start = text.find("## Code map").unwrap();
    let rest: String = [
        &text[..map_start],
        &text[map_start..][text[map_start..].find("\n## API").unwrap_or(0)..],
    ]
    .concat();
    for span in backticked(&rest).into_iter().filter(|span| is_path(span)) {
        if !exists(&span, &paths) {
            missing.push(format!("{span} (outside the code map)"));
        }
    }
    assert!(missing.is_empty(), "named but not there:\n{}", missing.join("\n"));
}

#[test]
fn every_crate_has_its_section() {
    let named: BTreeSet<String> = sections(&architecture())
        .into_iter()
        .flat_map(|(crates, _)| crates)
        .collect();
    let missing: Vec<String> = members()
        .into_iter()
        .filter(|member| !named.contains(member))
        .collect();
    assert!(missing.is_empty(), "crates without a section: {missing:?}");
}

/// A crate's top-level modules: `src/*.rs` and `src/*/` but `lib.rs`,
/// `main.rs` and `bin/`.
fn top_level_modules(crate_dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(crate_dir.join("src")) else {
        return Vec::new();
    };
    let mut modules: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if path.is_dir() {
                (name != "bin").then_some(name)
            } else {
                name.strip_suffix(".rs")
                    .filter(|stem| !["lib", "main"].contains(stem))
                    .map(str::to_owned)
            }
        })
        .collect();
    modules.sort();
    modules
}

#[test]
fn every_top_level_module_is_named_in_its_crate_s_section() {
    let sections = sections(&architecture());
    let mut unnamed = Vec::new();
    for member in members() {
        let Some((_, body)) = sections.iter().find(|(crates, _)| crates.contains(&member)) else {
            continue;
        };
        let spans = backticked(body);
        for module in top_level_modules(&root().join(&member)) {
            let named = spans.iter().any(|span| {
                span == &module
                    || span == &format!("{module}.rs")
                    || span == &format!("{module}/")
                    || span.starts_with(&format!("{module}/"))
                    || span.starts_with(&format!("{module}::"))
                    || span.contains(&format!("src/{module}"))
            });
            if !named {
                unnamed.push(format!("{member}: {module}"));
            }
        }
    }
    assert!(
        unnamed.is_empty(),
        "modules the code map does not name:\n{}",
        unnamed.join("\n")
    );
}
