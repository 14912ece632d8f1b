//! docs/ARCHITECTURE.md stays short and true. What can be checked is:
//!
//! - the page is at most [`MAX_LINES`] lines;
//! - every backticked repository path exists (from the root; in a crate's
//!   section or bullet, also from that crate or its `src/`), and so does
//!   every relative link;
//! - every item named as `file.rs::Item` or `file.rs::{A, B::c}` is
//!   declared in that file (`struct`, `enum`, `union`, `trait`, `type`,
//!   `fn`, `const`, `static`, `mod`, `macro_rules!`), re-exported by one of
//!   its `pub use`s, or, for `Type::item`, implemented there (`impl Type`)
//!   with `item` a function, constant or variant of the file;
//! - every member of the workspace has its text in the code map, and that
//!   text names each of the crate's top-level modules;
//! - every rule of the `<!-- dependency-rules -->` table holds: a crate's
//!   `[dependencies]` (not its dev-dependencies) followed through
//!   `Cargo.lock`, or its manifest alone, or the code under a directory.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The most lines the page may have: a map, not a manual.
const MAX_LINES: usize = 400;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is in the workspace")
        .to_owned()
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md")
}

fn read_toml(path: &Path) -> toml::Table {
    std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        .parse()
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn the_page_is_a_map_not_a_manual() {
    let lines = architecture().lines().count();
    assert!(
        lines <= MAX_LINES,
        "docs/ARCHITECTURE.md has {lines} lines, more than {MAX_LINES}: move detail to module docs"
    );
}

// The workspace.

/// A member of the workspace: its package name, directory and normal
/// dependencies (by package name).
struct Member {
    name: String,
    dir: PathBuf,
    dependencies: BTreeSet<String>,
}

/// The package that `key` (a key of a dependency table) names.
fn package_of(key: &str, spec: &toml::Value, workspace: &toml::Table) -> String {
    let renamed = |spec: &toml::Value| {
        spec.get("package")
            .and_then(toml::Value::as_str)
            .map(str::to_owned)
    };
    if let Some(package) = renamed(spec) {
        return package;
    }
    let inherited = spec.get("workspace").and_then(toml::Value::as_bool) == Some(true);
    inherited
        .then(|| workspace.get(key).and_then(renamed))
        .flatten()
        .unwrap_or_else(|| key.to_owned())
}

fn members() -> Vec<Member> {
    let manifest = read_toml(&root().join("Cargo.toml"));
    let workspace = &manifest["workspace"];
    let shared = workspace
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .cloned()
        .unwrap_or_default();
    workspace["members"]
        .as_array()
        .expect("workspace members")
        .iter()
        .map(|member| {
            let dir = root().join(member.as_str().expect("a member is a path"));
            let manifest = read_toml(&dir.join("Cargo.toml"));
            let mut tables: Vec<&toml::Table> = manifest
                .get("dependencies")
                .and_then(toml::Value::as_table)
                .into_iter()
                .collect();
            for target in manifest
                .get("target")
                .and_then(toml::Value::as_table)
                .into_iter()
                .flat_map(toml::Table::values)
            {
                tables.extend(target.get("dependencies").and_then(toml::Value::as_table));
            }
            let dependencies = tables
                .into_iter()
                .flatten()
                .map(|(key, spec)| package_of(key, spec, &shared))
                .collect();
            Member {
                name: manifest["package"]["name"]
                    .as_str()
                    .expect("a package name")
                    .to_owned(),
                dir,
                dependencies,
            }
        })
        .collect()
}

/// The crate that only unifies features: no code, and no dependency of
/// its counts as anyone's.
const WORKSPACE_HACK: &str = "workspace-hack";

// The page's parts.

/// The `code spans` of `text` outside fenced blocks (drawings), each with
/// its whitespace (a line break in a span) made one space.
fn backticked(text: &str) -> Vec<String> {
    let mut fenced = false;
    let prose: String = text
        .split_inclusive('\n')
        .filter(|line| {
            let fence = line.starts_with("```");
            fenced ^= fence;
            !fenced && !fence
        })
        .collect();
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|span| span.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// Where `heading` (`## Name`) starts, and where its chapter ends.
fn chapter(text: &str, heading: &str) -> Range<usize> {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md has no `{heading}`"))
        + 1;
    let end = text[start + 1..]
        .find("\n## ")
        .map_or(text.len(), |end| start + 1 + end + 1);
    start..end
}

/// The code map's text about each crate, as byte ranges of the page: the
/// body of a `### ` section whose heading names that crate alone in
/// backticks, or, under a heading naming several, the bullets that open
/// with the crate's name.
fn crate_texts(text: &str) -> BTreeMap<String, Vec<Range<usize>>> {
    let map = chapter(text, "## Code map");
    let mut texts: BTreeMap<String, Vec<Range<usize>>> = BTreeMap::new();
    let mut starts: Vec<usize> = text[map.clone()]
        .match_indices("\n### ")
        .map(|(at, _)| map.start + at + 1)
        .collect();
    starts.push(map.end);
    for section in starts.windows(2) {
        let (start, end) = (section[0], section[1]);
        let heading_end = start + text[start..end].find('\n').unwrap_or(end - start);
        let crates = backticked(&text[start..heading_end]);
        let body = heading_end..end;
        if let [one] = crates.as_slice() {
            texts.entry(one.clone()).or_default().push(body);
            continue;
        }
        for bullet in bullets(text, body) {
            let opening = text[bullet.clone()].trim_start_matches("- ");
            let named = crates
                .iter()
                .find(|name| opening.starts_with(&format!("`{name}`")));
            match named {
                Some(name) => texts.entry(name.clone()).or_default().push(bullet),
                None => panic!(
                    "a bullet under `{}` opens with none of its crates: {:?}",
                    &text[start..heading_end],
                    &text[bullet]
                ),
            }
        }
    }
    texts
}

/// The bullets (`- ` and the lines indented under it) within `range`.
fn bullets(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut bullets: Vec<Range<usize>> = Vec::new();
    let mut at = range.start;
    for line in text[range.clone()].split_inclusive('\n') {
        if line.starts_with("- ") {
            bullets.push(at..at + line.len());
        } else if line.starts_with("  ")
            && let Some(last) = bullets.last_mut()
            && last.end == at
        {
            last.end = at + line.len();
        }
        at += line.len();
    }
    bullets
}

/// The page without the given ranges.
fn outside(text: &str, ranges: &[Range<usize>]) -> String {
    let mut sorted = ranges.to_vec();
    sorted.sort_by_key(|range| range.start);
    let mut rest = String::new();
    let mut at = 0;
    for range in sorted {
        rest.push_str(&text[at..range.start.max(at)]);
        at = at.max(range.end);
    }
    rest.push_str(&text[at..]);
    rest
}

// Names in code spans.

/// What a code span names: a path, and the items of the file it names
/// (`file.rs::Item`, `file.rs::{A, B::c}`), each as its `::` segments.
struct Named {
    path: String,
    items: Vec<Vec<String>>,
}

/// Extensions of the files a span may name without a slash.
const EXTENSIONS: [&str; 14] = [
    ".rs", ".md", ".sh", ".toml", ".js", ".lua", ".json", ".css", ".html", ".sql", ".yaml", ".gz", ".asc",
    ".lock",
];

/// The path and items a span names, if it names any: a span with a slash
/// or a file's extension, and nothing that a path does not hold (URLs,
/// routes, globs, placeholders, commands and Rust paths are not paths).
fn named(span: &str) -> Option<Named> {
    let (path, items) = match span.split_once(".rs::") {
        Some((file, items)) => {
            let items = items
                .strip_prefix('{')
                .and_then(|items| items.strip_suffix('}'))
                .unwrap_or(items);
            let items = items
                .split(',')
                .map(|item| item.trim().split("::").map(str::to_owned).collect())
                .collect();
            (format!("{file}.rs"), items)
        }
        None => (span.to_owned(), Vec::new()),
    };
    let looks_like_a_file = EXTENSIONS.iter().any(|extension| path.ends_with(extension));
    let plain = !path.contains([
        ' ', '{', '}', '<', '>', '*', '=', '?', '$', '(', '"', '\'', ':', ',', '@', '|',
    ]) && !path.starts_with(['/', '-', '~', '+'])
        && !path.starts_with("./")
        && !path.starts_with("..");
    ((looks_like_a_file || path.contains('/')) && plain).then_some(Named { path, items })
}

/// Where `path` is, from the first of `bases` that has it.
fn resolve(path: &str, bases: &[PathBuf]) -> Option<PathBuf> {
    let directory = path.ends_with('/');
    bases.iter().map(|base| base.join(path)).find(|candidate| {
        if directory {
            candidate.is_dir()
        } else {
            candidate.exists()
        }
    })
}

/// The identifier at the start of `text`.
fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// What a Rust file names, by a textual reading of its lines.
#[derive(Default)]
struct Declared {
    /// Items declared (at any depth: methods and associated items too).
    items: BTreeSet<String>,
    /// Names its `pub use`s export.
    reexported: BTreeSet<String>,
    /// Types an `impl` block is for (or implements).
    implemented: BTreeSet<String>,
    /// Lines that could declare an enum variant: `Name,`, `Name(`, `Name {`.
    variants: BTreeSet<String>,
}

const ITEM_KEYWORDS: [&str; 10] = [
    "struct",
    "enum",
    "union",
    "trait",
    "type",
    "fn",
    "const",
    "static",
    "mod",
    "macro_rules!",
];

fn declared(source: &str) -> Declared {
    let mut found = Declared::default();
    let mut statement: Option<String> = None;
    for line in source.lines().map(str::trim) {
        if line.starts_with("//") {
            continue;
        }
        if let Some(open) = statement.as_mut() {
            open.push(' ');
            open.push_str(line);
        } else if line.starts_with("pub") && line.contains(" use ") {
            statement = Some(line.to_owned());
        }
        if statement.as_ref().is_some_and(|open| open.contains(';')) {
            found
                .reexported
                .extend(leaves(&statement.take().unwrap_or_default()));
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut at = usize::from(words.first().is_some_and(|word| word.starts_with("pub")));
        loop {
            match words.get(at) {
                Some(&("async" | "unsafe" | "extern" | "\"C\"" | "default")) => at += 1,
                Some(&"const") if matches!(words.get(at + 1), Some(&("fn" | "unsafe" | "async"))) => at += 1,
                _ => break,
            }
        }
        if let (Some(keyword), Some(name)) = (words.get(at), words.get(at + 1))
            && ITEM_KEYWORDS.contains(keyword)
        {
            found.items.insert(identifier(name).to_owned());
        }
        if line.starts_with("impl") {
            found.implemented.extend(
                line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .filter(|word| !word.is_empty())
                    .map(str::to_owned),
            );
        }
        let name = identifier(line);
        let after = &line[name.len()..];
        let variant_like = after.is_empty()
            || after.starts_with([',', '('])
            || after.starts_with(" {")
            || after.starts_with(" =");
        if name.starts_with(|c: char| c.is_uppercase()) && variant_like {
            found.variants.insert(name.to_owned());
        }
    }
    found
}

/// The names a `use` statement brings in: the leaves of its tree (`a::B`,
/// `a::{B, c::D}`, `a::E as F`: B, D, F).
fn leaves(statement: &str) -> Vec<String> {
    let tree = statement.split_once(" use ").map_or("", |(_, tree)| tree);
    let mut tokens: Vec<&str> = Vec::new();
    let mut rest = tree;
    while !rest.is_empty() {
        let word = identifier(rest);
        if word.is_empty() {
            let length = if rest.starts_with("::") {
                2
            } else {
                rest.chars().next().map_or(1, char::len_utf8)
            };
            let punctuation = &rest[..length];
            if !punctuation.trim().is_empty() {
                tokens.push(punctuation);
            }
            rest = &rest[punctuation.len()..];
        } else {
            tokens.push(word);
            rest = &rest[word.len()..];
        }
    }
    let mut names = Vec::new();
    for (at, token) in tokens.iter().enumerate() {
        let next = tokens.get(at + 1).copied();
        let is_word = token.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        if is_word
            && !matches!(*token, "as" | "self" | "crate" | "super")
            && !matches!(next, Some("::" | "as"))
        {
            names.push((*token).to_owned());
        }
    }
    names
}

/// Whether `file` declares or re-exports `item` (its `::` segments).
fn names(file: &Declared, item: &[String]) -> bool {
    let Some((first, rest)) = item.split_first() else {
        return false;
    };
    let first_found = file.items.contains(first) || file.reexported.contains(first);
    let implemented = file.implemented.contains(first);
    let rest_found = rest
        .iter()
        .all(|segment| file.items.contains(segment) || file.variants.contains(segment));
    (first_found || (implemented && !rest.is_empty())) && rest_found
}

/// Why each name in `text` does not hold, its paths read from `bases`.
fn check_names(text: &str, bases: &[PathBuf], whose: &str, problems: &mut Vec<String>) {
    for span in backticked(text) {
        let Some(named) = named(&span) else { continue };
        let Some(file) = resolve(&named.path, bases) else {
            problems.push(format!("`{}` ({whose}): no such file or directory", named.path));
            continue;
        };
        if named.items.is_empty() {
            continue;
        }
        let source = std::fs::read_to_string(&file).unwrap_or_default();
        let file_names = declared(&source);
        for item in &named.items {
            if !names(&file_names, item) {
                problems.push(format!(
                    "`{}` ({whose}): no `{}` there",
                    named.path,
                    item.join("::")
                ));
            }
        }
    }
}

#[test]
fn every_path_and_item_named_is_there() {
    let text = architecture();
    let texts = crate_texts(&text);
    let dirs: BTreeMap<String, PathBuf> = members()
        .into_iter()
        .map(|member| (member.name, member.dir))
        .collect();
    let mut problems = Vec::new();
    for (name, ranges) in &texts {
        let dir = dirs
            .get(name)
            .unwrap_or_else(|| panic!("the code map names `{name}`, no member"));
        let bases = [root(), dir.clone(), dir.join("src")];
        for range in ranges {
            check_names(
                &text[range.clone()],
                &bases,
                &format!("section {name}"),
                &mut problems,
            );
        }
    }
    let everywhere: Vec<Range<usize>> = texts.values().flatten().cloned().collect();
    check_names(
        &outside(&text, &everywhere),
        &[root()],
        "outside the code map's crates",
        &mut problems,
    );
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md names what is not there:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_relative_link_resolves() {
    let text = architecture();
    let docs = root().join("docs");
    let missing: Vec<&str> = text
        .match_indices("](")
        .filter_map(|(at, _)| text[at + 2..].split_once(')').map(|(target, _)| target))
        .filter(|target| !target.contains("://") && !target.starts_with('#'))
        .filter(|target| !docs.join(target.split('#').next().unwrap_or(target)).exists())
        .collect();
    assert!(missing.is_empty(), "links to nowhere: {missing:?}");
}

#[test]
fn every_crate_has_its_text_in_the_code_map() {
    let texts = crate_texts(&architecture());
    let members: BTreeSet<String> = members().into_iter().map(|member| member.name).collect();
    let named: BTreeSet<String> = texts.into_keys().collect();
    let missing: Vec<_> = members.difference(&named).collect();
    let strangers: Vec<_> = named.difference(&members).collect();
    assert!(
        missing.is_empty(),
        "crates without a section or bullet: {missing:?}"
    );
    assert!(
        strangers.is_empty(),
        "sections of crates that are no members: {strangers:?}"
    );
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
            if entry.path().is_dir() {
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
fn every_top_level_module_is_named_in_its_crate_s_text() {
    let text = architecture();
    let texts = crate_texts(&text);
    let mut unnamed = Vec::new();
    for member in members() {
        let Some(ranges) = texts.get(&member.name) else {
            continue;
        };
        let paths: Vec<String> = ranges
            .iter()
            .flat_map(|range| backticked(&text[range.clone()]))
            .map(|span| {
                span.split_once(".rs::")
                    .map_or(span.clone(), |(file, _)| format!("{file}.rs"))
            })
            .collect();
        for module in top_level_modules(&member.dir) {
            let named = paths.iter().any(|path| {
                let dir = member.dir.strip_prefix(root()).unwrap_or(&member.dir);
                let path = path.strip_prefix(&format!("{}/", dir.display())).unwrap_or(path);
                let path = path.strip_prefix("src/").unwrap_or(path);
                path == module || path == format!("{module}.rs") || path.starts_with(&format!("{module}/"))
            });
            if !named {
                unnamed.push(format!("{}: {module}", member.name));
            }
        }
    }
    assert!(
        unnamed.is_empty(),
        "modules the code map does not name:\n{}",
        unnamed.join("\n")
    );
}

// Dependency rules.

/// `Cargo.lock`'s packages: (name, version) → the packages each depends
/// on, as `name` or `name version`.
type Lock = BTreeMap<(String, String), Vec<String>>;

fn lock() -> Lock {
    let lock = read_toml(&root().join("Cargo.lock"));
    lock["package"]
        .as_array()
        .expect("locked packages")
        .iter()
        .map(|package| {
            let field = |key: &str| package[key].as_str().expect("a name and a version").to_owned();
            let dependencies = package
                .get("dependencies")
                .and_then(toml::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(toml::Value::as_str)
                .map(|dependency| dependency.split(" (").next().unwrap_or(dependency).to_owned())
                .collect();
            ((field("name"), field("version")), dependencies)
        })
        .collect()
}

/// How `from` reaches every package it depends on, at all: each package
/// with the one it was reached from. Members count by their
/// `[dependencies]`, other packages by `Cargo.lock`; `workspace-hack` is
/// left out.
fn reached(
    from: &str,
    members: &BTreeMap<String, BTreeSet<String>>,
    lock: &Lock,
) -> BTreeMap<String, String> {
    let mut parents: BTreeMap<String, String> = BTreeMap::new();
    let mut stack: Vec<(String, Option<String>)> = vec![(from.to_owned(), None)];
    let mut seen: BTreeSet<(String, Option<String>)> = BTreeSet::new();
    while let Some((name, version)) = stack.pop() {
        if !seen.insert((name.clone(), version.clone())) {
            continue;
        }
        let next: Vec<(String, Option<String>)> = match members.get(&name) {
            Some(dependencies) => dependencies
                .iter()
                .map(|dependency| (dependency.clone(), None))
                .collect(),
            None => lock
                .iter()
                .filter(|((locked, at), _)| {
                    *locked == name && version.as_ref().is_none_or(|version| version == at)
                })
                .flat_map(|(_, dependencies)| dependencies)
                .map(|dependency| match dependency.split_once(' ') {
                    Some((name, version)) => (name.to_owned(), Some(version.to_owned())),
                    None => (dependency.clone(), None),
                })
                .collect(),
        };
        for (dependency, version) in next {
            if dependency == WORKSPACE_HACK {
                continue;
            }
            parents.entry(dependency.clone()).or_insert_with(|| name.clone());
            stack.push((dependency, version));
        }
    }
    parents
}

/// `a → b → c`: how `from` reaches `to`.
fn chain(from: &str, to: &str, parents: &BTreeMap<String, String>) -> String {
    let mut chain = vec![to.to_owned()];
    while let Some(parent) = parents.get(chain.last().expect("not empty")) {
        chain.push(parent.clone());
        if parent == from || chain.len() > parents.len() {
            break;
        }
    }
    chain.reverse();
    chain.join(" → ")
}

/// Lines of code of the `.rs` files under `dir`, comments aside, with
/// their file and number.
fn code_lines(dir: &Path) -> Vec<(PathBuf, usize, String)> {
    let mut lines = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                let source = std::fs::read_to_string(&path).expect("a source file");
                for (number, line) in source.lines().enumerate() {
                    let code = line.split("//").next().unwrap_or(line);
                    if !code.trim().is_empty() {
                        lines.push((path.clone(), number + 1, code.to_owned()));
                    }
                }
            }
        }
    }
    lines
}

/// Whether `line` names `name` as a whole (`crate::operator`, not
/// `crate::operators`).
fn mentions(line: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(name)
        .any(|(at, _)| !line[..at].ends_with(word) && !line[at + name.len()..].starts_with(word))
}

#[test]
fn the_dependency_rules_hold() {
    let text = architecture();
    let rows = doc_tables::table(&text, "dependency-rules");
    let members: BTreeMap<String, BTreeSet<String>> = members()
        .into_iter()
        .filter(|member| member.name != WORKSPACE_HACK)
        .map(|member| (member.name, member.dependencies))
        .collect();
    let lock = lock();
    let mut broken = Vec::new();
    for row in &rows {
        let [subject, forbidden, checked] = row.as_slice() else {
            panic!("a dependency rule has three cells: {row:?}");
        };
        let forbidden = doc_tables::code(forbidden);
        assert!(!forbidden.is_empty(), "a rule forbids nothing: {row:?}");
        if checked == "in code" {
            let dir = root().join(doc_tables::single_code(subject));
            assert!(dir.is_dir(), "{}: no such directory", dir.display());
            for name in &forbidden {
                if let Some(module) = name.strip_prefix("crate::") {
                    let src = dir
                        .ancestors()
                        .find(|ancestor| ancestor.ends_with("src"))
                        .unwrap_or_else(|| panic!("{} is not under a crate's src/", dir.display()));
                    assert!(
                        src.join(format!("{module}.rs")).exists() || src.join(module).is_dir(),
                        "the rule names `{name}`, which {} does not have",
                        src.display()
                    );
                }
                for (file, number, line) in code_lines(&dir) {
                    if mentions(&line, name) {
                        let file = file.strip_prefix(root()).unwrap_or(&file).display();
                        broken.push(format!("{file}:{number} names `{name}`"));
                    }
                }
            }
            continue;
        }
        let everyone = subject == "every crate";
        let subjects: Vec<String> = if everyone {
            members.keys().cloned().collect()
        } else {
            doc_tables::code(subject)
        };
        for name in &forbidden {
            // A ban on the whole workspace may name a package nothing
            // brings (that is the point); any other rule names one that is
            // there, so that a misspelt name does not hold by itself.
            assert!(
                everyone || members.contains_key(name) || lock.keys().any(|(locked, _)| locked == name),
                "a rule names `{name}`, in no manifest of the workspace nor Cargo.lock"
            );
        }
        for crate_name in &subjects {
            let dependencies = members
                .get(crate_name)
                .unwrap_or_else(|| panic!("a rule is about `{crate_name}`, no member of the workspace"));
            let parents = match checked.as_str() {
                "at all" => reached(crate_name, &members, &lock),
                "directly" => dependencies
                    .iter()
                    .map(|name| (name.clone(), crate_name.clone()))
                    .collect(),
                other => panic!("a rule is checked `{other}`: say `at all`, `directly` or `in code`"),
            };
            for name in forbidden.iter().filter(|name| parents.contains_key(*name)) {
                broken.push(format!(
                    "{crate_name} depends on {name}: {}",
                    chain(crate_name, name, &parents)
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "docs/ARCHITECTURE.md's dependency rules do not hold:\n{}",
        broken.join("\n")
    );
}

#[test]
fn declarations_are_read_as_the_map_needs() {
    let source = r#"
        pub(crate) use engine::{CheckSink, Engine};
        pub use routes::configure as configure_routes;
        pub use model::{
            Channel, Declaration,
        };
        use private::Hidden;
        pub struct Stage;
        pub(crate) async fn classify() {}
        const fn limit() -> usize { 1 }
        pub const WAIT: u32 = 2;
        impl Graph {
            pub fn load() {}
        }
        pub enum Known {
            NotJudged,
            Held { progress: f64 },
        }
        // pub struct Commented;
    "#;
    let file = declared(source);
    let item = |text: &str| text.split("::").map(str::to_owned).collect::<Vec<_>>();
    for present in [
        "CheckSink",
        "Engine",
        "configure_routes",
        "Channel",
        "Declaration",
        "Stage",
        "classify",
        "limit",
        "WAIT",
        "Graph::load",
        "Known::NotJudged",
        "Known::Held",
    ] {
        assert!(names(&file, &item(present)), "{present} is there");
    }
    for absent in [
        "Hidden",
        "configure",
        "Commented",
        "Graph",
        "Stage::Missing",
        "Known::progress",
        "engine",
    ] {
        assert!(!names(&file, &item(absent)), "{absent} is not there");
    }
    let span = named("client/mod.rs::{Engine, Fleet::lot}").expect("names items");
    assert_eq!(span.path, "client/mod.rs");
    assert_eq!(span.items, [item("Engine"), item("Fleet::lot")]);
    for not_a_path in [
        "{prefix}/v1/graph",
        "/v1/rollouts",
        "crate::operator",
        "https://example.com/a",
        "scripts/bench-*.sh",
        "--once",
    ] {
        assert!(named(not_a_path).is_none(), "{not_a_path} is no path");
    }
    assert!(mentions("use crate::operator::Fleet;", "crate::operator"));
    assert!(!mentions("use crate::operators;", "crate::operator"));
}
