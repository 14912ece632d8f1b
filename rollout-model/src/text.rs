//! Words people and automation give a change (a reason, an actor, an
//! alert's summary): kept for ever in the audit and shown on every page,
//! so they are bounded and cleaned before they are kept. A NUL, which
//! PostgreSQL refuses in text, or an escape sequence for a terminal
//! reading the audit, never gets that far.

/// The most characters a reason keeps.
pub const REASON_CHARS: usize = 500;
/// The most characters an actor (a token's name, an alert's) keeps.
pub const ACTOR_CHARS: usize = 120;

/// `text` with every control character (NUL, newlines, escapes, …) turned
/// into a space, runs of white space made one, trimmed, and cut to
/// `max_chars` characters (the cut marked with `…`).
pub fn clean(text: &str, max_chars: usize) -> String {
    let words = text
        .split(|character: char| character.is_control() || character.is_whitespace())
        .filter(|word| !word.is_empty());
    let mut cleaned = String::new();
    for word in words {
        if !cleaned.is_empty() {
            cleaned.push(' ');
        }
        cleaned.push_str(word);
        if cleaned.chars().count() > max_chars {
            break;
        }
    }
    if cleaned.chars().count() <= max_chars {
        return cleaned;
    }
    let mut cut: String = cleaned.chars().take(max_chars.saturating_sub(1)).collect();
    cut.truncate(cut.trim_end().len());
    if max_chars > 0 {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_go_and_white_space_folds() {
        assert_eq!(
            clean("  storage\u{0}alarms\n\ton\x1b[31m 4.18.52  ", 100),
            "storage alarms on [31m 4.18.52"
        );
        assert_eq!(clean("", 10), "");
        assert_eq!(clean(" \n ", 10), "");
    }

    #[test]
    fn long_words_are_cut_and_marked() {
        let cut = clean(&"a".repeat(1000), 10);
        assert_eq!(cut, format!("{}…", "a".repeat(9)));
        assert_eq!(cut.chars().count(), 10);
        assert_eq!(clean("exactly10!", 10), "exactly10!");
        assert_eq!(clean("ten chars and more", 10).chars().count(), 10);
    }

    proptest::proptest! {
        #[test]
        fn cleaned_text_is_bounded_and_has_no_control_character(text in ".*", max in 1_usize..50) {
            let cleaned = clean(&text, max);
            proptest::prop_assert!(cleaned.chars().count() <= max);
            proptest::prop_assert!(!cleaned.chars().any(char::is_control));
            proptest::prop_assert!(!cleaned.starts_with(' ') && !cleaned.ends_with(' '));
        }
    }
}
