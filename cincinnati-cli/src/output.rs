//! Printing answers: the document as JSON or YAML, or text for people,
//! coloured only when stdout is a terminal (`NO_COLOR` and `CLICOLOR_FORCE`
//! are honoured).

use std::fmt::{Display, Write as _};
use std::io::Write as _;

use anstyle::{AnsiColor, Style};
use cincinnati_core::MatchingRule;
use serde::Serialize;

use crate::cli::Format;
use crate::outcome::Failure;

pub const HEADING: Style = Style::new().bold();
pub const GOOD: Style = AnsiColor::Green.on_default();
pub const RISK: Style = AnsiColor::Yellow.on_default();
pub const BAD: Style = AnsiColor::Red.on_default().bold();
pub const DIM: Style = Style::new().dimmed();

/// Prints `document` in `format`, or, as a table, what `table` writes.
pub fn print<D: Serialize>(
    format: Format,
    document: &D,
    table: impl FnOnce(&mut Text),
) -> Result<(), Failure> {
    let text = match format {
        Format::Json => {
            let mut json = serde_json::to_string_pretty(document).map_err(Failure::input)?;
            json.push('\n');
            json
        }
        Format::Yaml => serde_saphyr::to_string(document).map_err(Failure::input)?,
        Format::Table => {
            let mut text = Text::default();
            table(&mut text);
            text.0
        }
    };
    write_stdout(&text)
}

/// Writes to stdout, stripping colour when it is not a terminal. A reader
/// that went away (`| head`) is not an error.
pub fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut stdout = anstream::stdout();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(error.into()),
        _ => Ok(()),
    }
}

/// `text` in `style`.
pub fn styled(style: Style, text: impl Display) -> String {
    format!("{style}{text}{style:#}")
}

/// Text for people, built line by line.
#[derive(Default)]
pub struct Text(String);

/// A table cell: text, the style it is shown in, and whether it is
/// aligned to the right of its column (a number).
pub struct Cell {
    text: String,
    style: Style,
    right: bool,
}

impl Cell {
    pub fn plain(text: impl Display) -> Self {
        Self::styled(Style::new(), text)
    }

    pub fn styled(style: Style, text: impl Display) -> Self {
        Self {
            text: text.to_string(),
            style,
            right: false,
        }
    }

    /// A number (or a share), aligned to the right.
    pub fn number(text: impl Display) -> Self {
        Self {
            right: true,
            ..Self::plain(text)
        }
    }

    /// This cell aligned to the right.
    pub fn right(self) -> Self {
        Self { right: true, ..self }
    }
}

impl Text {
    pub fn line(&mut self, text: impl Display) {
        // Writing to a String cannot fail.
        let _ = writeln!(self.0, "{text}");
    }

    pub fn blank(&mut self) {
        self.0.push('\n');
    }

    /// Columns aligned under a bold header, indented by two spaces. A
    /// column of numbers (as its first row's cell) is aligned to the right,
    /// its title too.
    pub fn table(&mut self, header: &[&str], rows: Vec<Vec<Cell>>) {
        let mut widths: Vec<usize> = header.iter().map(|title| title.chars().count()).collect();
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.text.chars().count());
            }
        }
        let numbers: Vec<bool> = rows
            .first()
            .map(|row| row.iter().map(|cell| cell.right).collect())
            .unwrap_or_default();
        let header = header
            .iter()
            .enumerate()
            .map(|(column, title)| Cell {
                right: numbers.get(column).copied().unwrap_or(false),
                ..Cell::styled(HEADING, title)
            })
            .collect();
        for row in std::iter::once(header).chain(rows) {
            let last = row.len().saturating_sub(1);
            let mut line = String::from("  ");
            for (position, (cell, width)) in row.iter().zip(&widths).enumerate() {
                let padding = width - cell.text.chars().count();
                if cell.right {
                    line.extend(std::iter::repeat_n(' ', padding));
                }
                line.push_str(&styled(cell.style, &cell.text));
                if position < last {
                    let after = if cell.right { 2 } else { padding + 2 };
                    line.extend(std::iter::repeat_n(' ', after));
                }
            }
            self.line(line);
        }
    }
}

/// `1 cluster`, `2 clusters`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A time in hours as people read it: minutes below an hour, days from two.
pub fn hours(hours: f64) -> String {
    let minutes = hours * 60.0;
    if minutes < 1.0 {
        "<1 min".to_owned()
    } else if hours < 1.0 {
        format!("{minutes:.0} min")
    } else if hours < 48.0 {
        format!("{hours:.1} h")
    } else {
        format!("{:.1} d", hours / 24.0)
    }
}

/// When a risk applies, as people read it: the CVO evaluates the rules in
/// order and the first that it can evaluate decides.
pub fn rules_text(rules: &[MatchingRule]) -> String {
    let rules: Vec<String> = rules
        .iter()
        .map(|rule| match rule {
            MatchingRule::Always => "always".to_owned(),
            MatchingRule::PromQl { promql } => {
                format!(
                    "PromQL {}",
                    promql.split_whitespace().collect::<Vec<_>>().join(" ")
                )
            }
            MatchingRule::Other { rule_type, .. } => format!("{rule_type} (unknown to clusters)"),
        })
        .collect();
    rules.join(", else ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_durations_read_as_people_say_them() {
        assert_eq!(count(1, "cluster", "clusters"), "1 cluster");
        assert_eq!(count(0, "cluster", "clusters"), "0 clusters");
        assert_eq!(hours(0.001), "<1 min");
        assert_eq!(hours(0.5), "30 min");
        assert_eq!(hours(5.5), "5.5 h");
        assert_eq!(hours(72.0), "3.0 d");
    }
}
