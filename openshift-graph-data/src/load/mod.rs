//! Loading graph-data: files in, a validated [`GraphData`] (or the reasons it
//! was refused) out.
//!
//! Loading never stops at the first problem: every file is read and every
//! problem reported, so one run of the service tells a graph-data
//! administrator everything there is to fix.

mod blocked_edges;
mod channels;
mod raw_metadata;
mod schema;
pub(crate) mod yaml;

use std::collections::HashMap;
use std::fmt;

use rayon::prelude::*;

use crate::diagnostic::{Diagnostic, DiagnosticKind, Location, Strictness};
use crate::files::{BLOCKED_EDGES_DIR, GraphDataFiles, has_yaml_extension};
use crate::model::{FromPattern, GraphData};

pub use blocked_edges::{BlockedEdge, BlockedEdgeSpec, SpecProblem};
pub use schema::SUPPORTED_SCHEMA;

/// Graph-data that passed validation, and the warnings it raised.
#[derive(Debug)]
pub struct Loaded {
    pub graph_data: GraphData,
    pub warnings: Vec<Diagnostic>,
}

/// Graph-data that must not be used. The last good graph-data stays in use.
#[derive(Debug, Clone, thiserror::Error)]
pub struct Refused {
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "graph-data refused with {} error(s)", self.errors.len())?;
        for error in &self.errors {
            write!(f, "\n  {error}")?;
        }
        Ok(())
    }
}

impl GraphData {
    /// Validates and loads graph-data. `strictness` decides which problems
    /// refuse it (see [`Strictness`]). Signatures are not graph-data to
    /// apply: only their misplaced entries are reported.
    pub fn load(files: &GraphDataFiles, strictness: &Strictness) -> Result<Loaded, Refused> {
        let mut findings = Findings::new(strictness);
        for (path, why) in files.unreadable() {
            findings.report(
                Location::file(path, None),
                DiagnosticKind::Unreadable,
                format!("cannot read: {why}"),
            );
        }
        for (path, why) in files.misplaced_signatures() {
            findings.report(
                Location::file(path, None),
                DiagnosticKind::MisplacedSignature,
                format!("not published: {why}"),
            );
        }
        // Hashing megabytes of content takes a fair share of the parsing's
        // time: done beside it.
        let (revision, (schema_version, raw_metadata, channels, (blocks, risks))) = rayon::join(
            || files.revision(),
            || {
                let schema_version = schema::read(files, &mut findings);
                let channels = channels::read(files, schema_version.as_ref(), &mut findings);
                (
                    schema_version,
                    raw_metadata::read(files, &mut findings),
                    channels,
                    blocked_edges::read(files, &mut findings),
                )
            },
        );

        let (errors, warnings): (Vec<_>, Vec<_>) =
            findings.diagnostics.into_iter().partition(Diagnostic::is_error);
        let Some(schema_version) = schema_version.filter(|_| errors.is_empty()) else {
            return Err(Refused { errors, warnings });
        };
        let mut graph_data = GraphData {
            schema_version,
            raw_metadata,
            channels,
            blocks,
            risks,
            revision,
            removals_by_release: HashMap::new(),
        };
        graph_data.index_removals();
        Ok(Loaded { graph_data, warnings })
    }
}

/// The problems found so far, with their severity already decided.
struct Findings<'a> {
    strictness: &'a Strictness,
    diagnostics: Vec<Diagnostic>,
    /// `from` regexes compiled once each: graph-data repeats a few patterns
    /// (`.*`, `4[.]14[.].*`) across hundreds of files.
    regexes: HashMap<String, Result<FromPattern, String>>,
}

impl<'a> Findings<'a> {
    fn new(strictness: &'a Strictness) -> Self {
        Self {
            strictness,
            diagnostics: Vec::new(),
            regexes: HashMap::new(),
        }
    }

    fn report(&mut self, location: Location, kind: DiagnosticKind, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic {
            location,
            severity: self.strictness.severity(kind),
            kind,
            message: message.into(),
        });
    }

    fn report_at(&mut self, path: &str, line: Option<u64>, kind: DiagnosticKind, message: impl Into<String>) {
        self.report(Location::file(path, line), kind, message);
    }

    fn compile(&mut self, pattern: &str) -> Result<FromPattern, String> {
        self.regexes
            .entry(pattern.to_owned())
            .or_insert_with(|| FromPattern::compile(pattern))
            .clone()
    }

    /// Compiles the `patterns` not compiled yet, side by side, for
    /// [`Findings::compile`] to find: compiling is most of the cost of a
    /// blocked edge.
    fn compile_all<'p>(&mut self, patterns: impl Iterator<Item = &'p str>) {
        let mut new: Vec<&str> = patterns
            .filter(|pattern| !self.regexes.contains_key(*pattern))
            .collect();
        new.sort_unstable();
        new.dedup();
        let compiled: Vec<_> = new
            .into_par_iter()
            .map(|pattern| (pattern.to_owned(), FromPattern::compile(pattern)))
            .collect();
        self.regexes.extend(compiled);
    }

    /// The YAML documents directly in `dir`, in path order. Files that are
    /// not `.yaml`/`.yml` or not UTF-8 are reported and left out; a
    /// blocked edge named `.yml` is read, and reported.
    fn yaml_documents<'f>(&mut self, files: &'f GraphDataFiles, dir: &'f str) -> Vec<(&'f str, &'f str)> {
        let mut documents = Vec::new();
        for (path, content) in files.in_dir(dir) {
            let name = path.rsplit('/').next().unwrap_or(path);
            if dir == BLOCKED_EDGES_DIR && name.ends_with(".yml") {
                self.report_at(
                    path,
                    None,
                    DiagnosticKind::YmlExtension,
                    "read, but graph-data's CI accepts only .yaml files in blocked-edges/",
                );
            }
            if !name.contains('.') {
                self.report_at(
                    path,
                    None,
                    DiagnosticKind::MissingExtension,
                    "no extension; only .yaml and .yml files are read",
                );
            } else if !has_yaml_extension(name) {
                self.report_at(
                    path,
                    None,
                    DiagnosticKind::InvalidExtension,
                    "only .yaml and .yml files are read",
                );
            } else {
                match std::str::from_utf8(content) {
                    Ok(text) => documents.push((path, text)),
                    Err(error) => {
                        self.report_at(path, None, DiagnosticKind::Syntax, format!("not UTF-8: {error}"))
                    }
                }
            }
        }
        documents
    }

    /// The YAML documents directly in `dir`, in path order, each read as
    /// `T`, with its text. They are parsed side by side (graph-data is over
    /// a thousand small files); their problems are reported by
    /// [`Findings::accept`] as each is used, so that a file's problems are
    /// listed together.
    fn parse_documents<'f, T: serde::de::DeserializeOwned + Send>(
        &mut self,
        files: &'f GraphDataFiles,
        dir: &'f str,
        known: &[&str],
    ) -> Vec<Document<'f, T>> {
        self.yaml_documents(files, dir)
            .into_par_iter()
            .map(|(path, text)| Document {
                path,
                text,
                parsed: parse_yaml::<T>(text, known),
            })
            .collect()
    }

    /// The document at `path` once its reading's problems are reported:
    /// unknown top-level keys as warnings (newer graph-data may add keys),
    /// and why it could not be read, leaving it out (`None`).
    fn accept<T>(&mut self, path: &str, parsed: Parsed<T>, known: &[&str]) -> Option<T> {
        match parsed {
            Ok((document, unknown_keys)) => {
                for key in unknown_keys {
                    self.report_at(
                        path,
                        Some(yaml::line_of(&key)),
                        DiagnosticKind::UnknownKey,
                        format!(
                            "unknown key `{}` is ignored (known: {})",
                            key.value,
                            known.join(", ")
                        ),
                    );
                }
                Some(document)
            }
            Err(error) => {
                self.report_at(path, error.line, DiagnosticKind::Syntax, error.message);
                None
            }
        }
    }
}

/// A YAML document read as `T`, with its top-level keys that are not known,
/// or why it could not be read.
type Parsed<T> = Result<(T, Vec<yaml::Spanned<String>>), yaml::YamlError>;

/// A graph-data file, its text, and what reading it as `T` gave.
struct Document<'f, T> {
    path: &'f str,
    text: &'f str,
    parsed: Parsed<T>,
}

/// A YAML document and its top-level keys that are not `known`.
fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str, known: &[&str]) -> Parsed<T> {
    let document = yaml::parse::<T>(text)?;
    let unknown_keys = if yaml::only_known_keys(text, known) {
        Vec::new()
    } else {
        let keys = yaml::top_level_keys(text).unwrap_or_default();
        keys.into_iter()
            .filter(|key| !known.contains(&key.value.as_str()))
            .collect()
    };
    Ok((document, unknown_keys))
}
