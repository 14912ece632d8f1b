//! YAML documents with line numbers: typed values through serde, and the
//! top-level keys, so that unknown keys can be reported where they are.

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;
use serde::de::{DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
pub use serde_saphyr::Spanned;
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};

/// A YAML document that could not be read as expected.
#[derive(Debug)]
pub struct YamlError {
    pub line: Option<u64>,
    pub message: String,
}

pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    serde_saphyr::from_str(&as_libyaml_reads(text)).map_err(|error| YamlError {
        line: error.location().map(|location| location.line()),
        message: error.without_snippet().to_string(),
    })
}

/// The keys of a top-level mapping, in document order.
pub(crate) fn top_level_keys(text: &str) -> Result<Vec<Spanned<String>>, YamlError> {
    parse::<TopLevelKeys>(text).map(|keys| keys.0)
}

/// Whether every top-level key of a block-style document is one of
/// `known`, as far as a glance at each line can tell: `false` means "not
/// sure", and the document's keys are then read properly. Parsing a
/// document a second time for its keys was a third of loading graph-data.
pub(crate) fn only_known_keys(text: &str, known: &[&str]) -> bool {
    text.lines().all(|line| {
        let glance = line.trim_end();
        if glance.is_empty() || glance.starts_with(['#', ' ', '-']) {
            // A comment, something nested, or an item of a top-level key's list.
            return glance != "---";
        }
        let Some((key, rest)) = glance.split_once(':') else {
            return false;
        };
        let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        plain && (rest.is_empty() || rest.starts_with(' ')) && known.contains(&key)
    })
}

/// `text`, written so that serde-saphyr reads it as libyaml does.
///
/// A block scalar (`|`, `>`) whose last line ends the input without a line
/// break has no final line break in libyaml's reading, and so in upstream's
/// graph-builder: `"key: |\n  text"` is `"text"`. serde-saphyr's parser adds
/// one (the YAML test suite's reading) and does not let its caller choose.
/// Graph-data has such files (a PromQL query ending a risk file without a
/// final newline), so for them the scalar's chomping is made `-` (strip):
/// with no line break after the last line, stripping keeps exactly what
/// libyaml keeps. Line numbers do not change.
fn as_libyaml_reads(text: &str) -> Cow<'_, str> {
    let last_line = text.rsplit(['\n', '\r']).next().unwrap_or_default();
    if last_line.trim().is_empty() {
        return Cow::Borrowed(text);
    }
    let Some(content_line) = block_scalar_ending_the_input(text) else {
        return Cow::Borrowed(text);
    };
    let lines = yaml_lines(text);
    let Some(before_content) = lines.get(..content_line) else {
        return Cow::Borrowed(text);
    };
    // Lines between the header and the first content line are empty ones.
    let header_line = before_content.iter().rposition(|line| !line.trim().is_empty());
    let rewritten = header_line.and_then(|index| {
        let header = BLOCK_SCALAR_HEADER.captures(lines[index])?;
        let mut line = lines[index][..header.get(0)?.start()].to_owned();
        line.push_str(&header["style"]);
        line.extend(header["indicators"].chars().filter(char::is_ascii_digit));
        line.push('-');
        line.push_str(&header["rest"]);
        Some((index, line))
    });
    let Some((index, header)) = rewritten else {
        return Cow::Borrowed(text);
    };
    let mut written = String::with_capacity(text.len() + 1);
    for (at, line) in lines.iter().enumerate() {
        written.push_str(if at == index { &header } else { line });
    }
    Cow::Owned(written)
}

/// `text`'s lines, each with its line break, as YAML breaks lines (and the
/// parser numbers them): at CR LF, a lone CR or a lone LF.
fn yaml_lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while at < bytes.len() {
        let end = match bytes[at] {
            b'\r' if bytes.get(at + 1) == Some(&b'\n') => at + 2,
            b'\r' | b'\n' => at + 1,
            _ => {
                at += 1;
                continue;
            }
        };
        lines.push(&text[start..end]);
        (start, at) = (end, end);
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// A block scalar header at the end of its line (the parser has checked its
/// form): style, indentation and chomping indicators, perhaps a comment.
static BLOCK_SCALAR_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?<style>[|>])(?<indicators>[1-9+-]{0,2})(?<rest>(?:[ \t]+#[^\r\n]*)?[ \t]*\r?\n?)$")
        .expect("a valid regex")
});

/// The 0-based line where the content of the document's last scalar starts,
/// when that scalar is a block scalar that runs to the end of `text`.
fn block_scalar_ending_the_input(text: &str) -> Option<usize> {
    let mut last_scalar = None;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.ok()?;
        if let Event::Scalar(_, style, ..) = event {
            last_scalar = Some((style, span));
        }
    }
    let (style, span) = last_scalar?;
    let block = matches!(style, ScalarStyle::Literal | ScalarStyle::Folded);
    (block && span.end.byte_offset()? == text.len()).then(|| span.start.line() - 1)
}

/// The line a value was written on.
pub fn line_of<T>(spanned: &Spanned<T>) -> u64 {
    spanned.referenced.line()
}

/// The top-level `key` of a block-style document `text`: its 1-based line
/// and its value as written on that line (trimmed, without a comment), when
/// found so. For what a parse does not keep cheaply: where a key is (needed
/// only to report a problem) and how a scalar is written.
pub(crate) fn key_on_its_line<'t>(text: &'t str, key: &str) -> Option<(u64, &'t str)> {
    text.lines().enumerate().find_map(|(index, line)| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            return None;
        }
        // A comment starts at a `#` after white space.
        let comment = rest
            .char_indices()
            .find(|&(at, c)| c == '#' && rest[..at].ends_with([' ', '\t']));
        let end = comment.map_or(rest.len(), |(at, _)| at);
        Some((index as u64 + 1, rest[..end].trim()))
    })
}

/// Whether the top-level `key` of `text`, read as `value`, is written as a
/// plain scalar that YAML 1.1 reads as something other than a string (see
/// [`is_yaml11_non_string`]): `name: Yes`, not `name: 'Yes'`.
pub(crate) fn is_written_as_non_string(text: &str, key: &str, value: &str) -> bool {
    is_yaml11_non_string(value) && key_on_its_line(text, key).is_some_and(|(_, written)| written == value)
}

/// Whether a plain scalar is something other than a string in YAML 1.1 as
/// PyYAML reads it, which graph-data's CI uses: a boolean (`yes`, `Off`;
/// not `y` or `n`), null (`~`, `null`, nothing), a number (`42`, `0x1F`,
/// `1_000`, `4.10`, `1:30`, `.inf`) or a timestamp (`2024-01-31`). serde
/// reads any scalar into a `String`; graph-data's CI refuses these where it
/// wants a string.
pub(crate) fn is_yaml11_non_string(plain: &str) -> bool {
    YAML11_NON_STRING.is_match(plain)
}

/// The YAML 1.1 types (yaml.org/type: bool, null, int, float, timestamp),
/// as PyYAML resolves them.
static YAML11_NON_STRING: LazyLock<Regex> = LazyLock::new(|| {
    let bool = "yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF";
    let null = "~|null|Null|NULL|";
    let int = r"[-+]?(?:0b[01_]+|0x[0-9a-fA-F_]+|0[0-7_]+|0|[1-9][0-9_]*(?::[0-5]?[0-9])*)";
    let float = r"[-+]?(?:(?:[0-9][0-9_]*\.[0-9_]*|\.[0-9_]+)(?:[eE][-+][0-9]+)?|[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|\.(?:inf|Inf|INF))|\.(?:nan|NaN|NAN)";
    let date = r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}";
    let time = r"(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?";
    Regex::new(&format!("^(?:{bool}|{null}|{int}|{float}|{date}(?:{time})?)$")).expect("a valid regex")
});

struct TopLevelKeys(Vec<Spanned<String>>);

impl<'de> Deserialize<'de> for TopLevelKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeysVisitor;

        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = TopLevelKeys;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopLevelKeys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(TopLevelKeys(keys))
            }
        }

        deserializer.deserialize_map(KeysVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_with_their_lines() {
        let keys = top_level_keys("# comment\nname: a\nfeeder:\n  name: b\nversions: []\n").unwrap();
        let found: Vec<_> = keys
            .iter()
            .map(|key| (key.value.as_str(), line_of(key)))
            .collect();
        assert_eq!(found, [("name", 2), ("feeder", 3), ("versions", 5)]);
    }

    #[test]
    fn a_glance_vouches_only_for_plain_known_keys() {
        let known = ["to", "from", "name"];
        assert!(only_known_keys(
            "to: 4.1.1\nfrom: .*\n# why\nname:\n  - a\n- b\n",
            &known
        ));
        for unsure in [
            "to: 4.1.1\nowner: x\n",
            "\"to\": 4.1.1\n",
            "{to: 4.1.1, owner: x}\n",
            "to: 4.1.1\n---\nowner: x\n",
            "to:4.1.1\n",
            "? to\n: 4.1.1\n",
        ] {
            assert!(!only_known_keys(unsure, &known), "{unsure:?}");
        }
    }

    #[test]
    fn only_a_block_scalar_ending_the_input_is_rewritten_and_only_its_header() {
        let rewritten = |text| match as_libyaml_reads(text) {
            Cow::Owned(text) => Some(text),
            Cow::Borrowed(_) => None,
        };
        assert_eq!(rewritten("a: |\n  x").as_deref(), Some("a: |-\n  x"));
        assert_eq!(
            rewritten("a: b\nc: >+2 # note\r\n\r\n   x\r\n  y").as_deref(),
            Some("a: b\nc: >2- # note\r\n\r\n   x\r\n  y")
        );
        assert_eq!(rewritten("- |-\n  x").as_deref(), Some("- |-\n  x"));
        assert_eq!(rewritten("a: |\n  x\n"), None);
        assert_eq!(rewritten("a: |\n  x\n  "), None);
        assert_eq!(rewritten("a: |\n  x\nb: y"), None);
        assert_eq!(rewritten("a: |\n  x\n# comment"), None);
        assert_eq!(rewritten("a: [unclosed"), None);
        // Lines broken by a lone CR, as YAML breaks them (an old Mac editor's).
        assert_eq!(rewritten("a: b\rc: |\r  x").as_deref(), Some("a: b\rc: |-\r  x"));
    }

    /// Found by the `graph_data_yaml` fuzz target: a document with lone CRs
    /// and a block scalar last panicked, its lines counted at LF only.
    #[test]
    fn lone_carriage_returns_do_not_confuse_the_rewrite() {
        let fuzzed = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/fuzz/graph_data_yaml-crash-4edb2f2f"
        ))
        .unwrap();
        let text = String::from_utf8_lossy(&fuzzed);
        assert!(text.contains('\r'));
        let _ = as_libyaml_reads(&text);
        let _ = parse::<serde_json::Value>(&text);
    }

    #[test]
    fn lines_break_as_yaml_breaks_them() {
        assert_eq!(yaml_lines("a\r\nb\rc\nd"), ["a\r\n", "b\r", "c\n", "d"]);
        assert_eq!(yaml_lines("a\n"), ["a\n"]);
        assert!(yaml_lines("").is_empty());
    }

    #[test]
    fn keys_are_found_on_their_lines_as_written() {
        let text = "to: 4.1.1\nname: 'Yes' # quoted\nnamed: x\nmessage: |-\n  text\nurl:\thttps://x#y\n";
        assert_eq!(key_on_its_line(text, "to"), Some((1, "4.1.1")));
        assert_eq!(key_on_its_line(text, "name"), Some((2, "'Yes'")));
        assert_eq!(key_on_its_line(text, "message"), Some((4, "|-")));
        assert_eq!(key_on_its_line(text, "url"), Some((6, "https://x#y")));
        assert_eq!(key_on_its_line(text, "from"), None);
        assert_eq!(key_on_its_line("{name: Yes}", "name"), None);
        assert!(is_written_as_non_string("name: Yes # a boolean\n", "name", "Yes"));
        for string in [
            "name: 'Yes'\n",
            "name: \"Yes\"\n",
            "name: |-\n  Yes\n",
            "name: !!str Yes\n",
        ] {
            assert!(!is_written_as_non_string(string, "name", "Yes"), "{string:?}");
        }
    }

    #[test]
    fn yaml_1_1_non_strings_are_those_pyyaml_reads() {
        for non_string in [
            "yes",
            "Off",
            "TRUE",
            "~",
            "",
            "null",
            "42",
            "-7",
            "0x1F",
            "0o17x",
            "1_000",
            "4.10",
            ".5",
            "1e3x",
            "1:30",
            "1.5e+3",
            ".inf",
            ".NaN",
            "2024-01-31",
            "2024-1-3 10:00:00 +01",
        ] {
            let expected = !non_string.ends_with('x');
            assert_eq!(is_yaml11_non_string(non_string), expected, "{non_string:?}");
        }
        for string in [
            "y",
            "n",
            "Yes please",
            "CamelCase",
            "4.16.3",
            "v1",
            "https://x",
            "yEs",
        ] {
            assert!(!is_yaml11_non_string(string), "{string:?}");
        }
    }

    #[test]
    fn errors_name_the_line() {
        let error = parse::<Vec<String>>("- a\n- [b\n").unwrap_err();
        assert_eq!(error.line, Some(2), "{}", error.message);
    }
}
