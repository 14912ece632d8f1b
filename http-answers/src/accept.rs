//! Content negotiation: `Accept` (media types) and `Accept-Encoding` (gzip),
//! parsed as lists with q-values and parameters (RFC 9110 §12.5).
//!
//! Upstream compared the whole `Accept` header as one string, so lists and
//! q-values got 406; clients that send `application/json, */*;q=0.1` work here.

use actix_web::http::header::{HeaderName, HeaderValue};
use cincinnati_core::{ApiError, ErrorKind};
use smallvec::SmallVec;

use crate::fields::RequestFields;

/// The two Cincinnati media types.
pub const APPLICATION_JSON: &str = "application/json";
pub const CINCINNATI_V1: &str = "application/vnd.redhat.cincinnati.v1+json";

/// One element of a comma-separated header with its quality (0 to 1000).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Weighted<'a> {
    value: &'a str,
    quality: u16,
}

/// Splits a header into its elements and their q-values. Other parameters are
/// dropped; elements with a malformed q are ignored.
fn weighted_items<'a>(header_values: &[&'a str]) -> Vec<Weighted<'a>> {
    header_values
        .iter()
        .flat_map(|value| value.split(','))
        .filter_map(|element| {
            let mut parts = element.split(';').map(str::trim);
            let value = parts.next().filter(|value| !value.is_empty())?;
            let mut quality = 1000;
            for parameter in parts {
                if let Some((name, raw)) = parameter.split_once('=')
                    && name.trim().eq_ignore_ascii_case("q")
                {
                    quality = parse_quality(raw.trim())?;
                }
            }
            Some(Weighted { value, quality })
        })
        .collect()
}

/// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in thousandths.
fn parse_quality(raw: &str) -> Option<u16> {
    let (whole, fraction) = raw.split_once('.').unwrap_or((raw, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let thousandths = format!("{fraction:0<3}").parse::<u16>().ok()?;
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// The client accepted none of the offered media types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("none of {offered:?} is acceptable")]
pub struct NotAcceptable {
    pub offered: &'static [&'static str],
}

/// Which media types a route answers with and what it answers by default.
#[derive(Debug, Clone, Copy)]
pub struct MediaTypes {
    /// In order of preference: a wildcard (`*/*`, `application/*`, `*`)
    /// selects the first one.
    pub offered: &'static [&'static str],
    /// Answered when the request has no `Accept` header.
    pub when_absent: &'static str,
}

impl MediaTypes {
    /// The policy-engine: both media types; no `Accept` means v1, as upstream.
    pub const POLICY_ENGINE: MediaTypes = MediaTypes {
        offered: &[APPLICATION_JSON, CINCINNATI_V1],
        when_absent: CINCINNATI_V1,
    };

    /// Plain JSON only (the graph-builder, OpenAPI documents).
    pub const JSON_ONLY: MediaTypes = MediaTypes {
        offered: &[APPLICATION_JSON],
        when_absent: APPLICATION_JSON,
    };

    /// Chooses the media type to answer with from the request's `Accept`
    /// header values (none: the header is absent).
    ///
    /// Each offer gets the quality of the most specific range that matches it
    /// (`type/subtype` over `type/*` over `*/*`); the best quality wins, then
    /// the more specific match, then the earlier offer.
    pub fn negotiate(&self, accept_values: &[&str]) -> Result<&'static str, NotAcceptable> {
        if accept_values.iter().all(|value| value.trim().is_empty()) {
            return Ok(self.when_absent);
        }
        // What clients send (the cluster-version operator: one exact type),
        // answered without parsing: the only range, exact, at q=1.
        if let [value] = accept_values
            && let Some(offer) = self.offered.iter().find(|offer| value.trim() == **offer)
        {
            return Ok(offer);
        }
        let ranges = weighted_items(accept_values);
        self.offered
            .iter()
            .enumerate()
            .filter_map(|(position, offer)| {
                let (specificity, quality) = ranges
                    .iter()
                    .filter_map(|range| specificity(range.value, offer).map(|s| (s, range.quality)))
                    .max_by_key(|(specificity, _)| *specificity)?;
                (quality > 0).then_some((quality, specificity, std::cmp::Reverse(position), *offer))
            })
            .max()
            .map(|(.., offer)| offer)
            .ok_or(NotAcceptable {
                offered: self.offered,
            })
    }
}

impl MediaTypes {
    /// [`MediaTypes::negotiate`] on a request's `Accept` header; refusal is
    /// the `invalid_content_type` error clients know.
    pub fn negotiate_request(&self, request: &impl RequestFields) -> Result<&'static str, ApiError> {
        self.negotiate(&header_values(request, &actix_web::http::header::ACCEPT))
            .map_err(|_| ApiError::bare(ErrorKind::InvalidContentType))
    }
}

/// Every value of a header (it may be repeated), skipping non-text values;
/// held without an allocation for the one or two lines a request has.
pub fn header_values<'r>(request: &'r impl RequestFields, name: &HeaderName) -> SmallVec<[&'r str; 2]> {
    request.headers().get_all(name).filter_map(as_text).collect()
}

/// A field value as text: `HeaderValue::to_str`, word by word rather than
/// byte by byte (a value holds no control byte but tab, so it is text
/// exactly when it is ASCII; a property test holds it to `to_str`).
fn as_text(value: &HeaderValue) -> Option<&str> {
    let bytes = value.as_bytes();
    if bytes.is_ascii() {
        std::str::from_utf8(bytes).ok()
    } else {
        None
    }
}

/// How specifically `range` matches the media type `offer`: 2 for an exact
/// match, 1 for `type/*`, 0 for `*/*` (or a lone `*`, which upstream accepts).
fn specificity(range: &str, offer: &str) -> Option<u8> {
    if range == "*" || range == "*/*" {
        return Some(0);
    }
    let (range_type, range_subtype) = range.split_once('/')?;
    let (offer_type, offer_subtype) = offer.split_once('/')?;
    if !range_type.trim().eq_ignore_ascii_case(offer_type) {
        return None;
    }
    match range_subtype.trim() {
        "*" => Some(1),
        subtype if subtype.eq_ignore_ascii_case(offer_subtype) => Some(2),
        _ => None,
    }
}

/// Whether the `Accept-Encoding` header values allow a gzip body: `gzip`,
/// `x-gzip` or `*` with a non-zero quality, the most specific entry deciding.
pub fn accepts_gzip(accept_encoding_values: &[&str]) -> bool {
    // What clients send (the cluster-version operator: `gzip` alone),
    // answered without parsing; a property test holds it to the parse.
    if let [value] = accept_encoding_values
        && value.trim() == "gzip"
    {
        return true;
    }
    accepts_gzip_parsed(accept_encoding_values)
}

/// [`accepts_gzip`], every value parsed.
fn accepts_gzip_parsed(accept_encoding_values: &[&str]) -> bool {
    let items = weighted_items(accept_encoding_values);
    let quality_of = |names: &[&str]| {
        items
            .iter()
            .find(|item| names.iter().any(|name| item.value.eq_ignore_ascii_case(name)))
            .map(|item| item.quality)
    };
    quality_of(&["gzip", "x-gzip"])
        .or_else(|| quality_of(&["*"]))
        .is_some_and(|quality| quality > 0)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn negotiate(accept: &[&str]) -> Result<&'static str, NotAcceptable> {
        MediaTypes::POLICY_ENGINE.negotiate(accept)
    }

    proptest! {
        #[test]
        fn a_value_is_text_as_to_str_says(bytes in prop::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(value) = HeaderValue::from_bytes(&bytes) {
                prop_assert_eq!(as_text(&value), value.to_str().ok());
            }
        }

        #[test]
        fn a_printable_value_is_text_as_to_str_says(text in "[\\t -~\u{80}-\u{ff}]{0,40}") {
            let value = HeaderValue::from_str(&text).unwrap();
            prop_assert_eq!(as_text(&value), value.to_str().ok());
        }
    }

    #[test]
    fn upstream_single_values_keep_their_answers() {
        assert_eq!(negotiate(&[]), Ok(CINCINNATI_V1));
        assert_eq!(negotiate(&[APPLICATION_JSON]), Ok(APPLICATION_JSON));
        assert_eq!(negotiate(&[CINCINNATI_V1]), Ok(CINCINNATI_V1));
        for wildcard in ["*/*", "application/*", "*"] {
            assert_eq!(negotiate(&[wildcard]), Ok(APPLICATION_JSON), "{wildcard}");
        }
        assert!(negotiate(&["app/anything-really"]).is_err());
        assert!(negotiate(&["text/plain"]).is_err());
    }

    #[test]
    fn lists_q_values_and_parameters_are_understood() {
        assert_eq!(negotiate(&["text/html, application/json"]), Ok(APPLICATION_JSON));
        assert_eq!(
            negotiate(&["application/json;q=0.5, application/vnd.redhat.cincinnati.v1+json"]),
            Ok(CINCINNATI_V1)
        );
        assert_eq!(
            negotiate(&["application/json; charset=utf-8"]),
            Ok(APPLICATION_JSON)
        );
        assert_eq!(negotiate(&["text/plain", "*/*;q=0.1"]), Ok(APPLICATION_JSON));
        assert_eq!(negotiate(&["APPLICATION/JSON"]), Ok(APPLICATION_JSON));
    }

    #[test]
    fn the_most_specific_range_decides_an_offers_quality() {
        // `*/*` allows anything, but JSON itself is refused.
        assert_eq!(negotiate(&["*/*, application/json;q=0"]), Ok(CINCINNATI_V1));
        assert!(negotiate(&["application/*;q=0, text/*"]).is_err());
        assert!(negotiate(&["application/json;q=0"]).is_err());
    }

    #[test]
    fn malformed_q_values_drop_only_their_element() {
        assert_eq!(
            negotiate(&["application/json;q=2, application/vnd.redhat.cincinnati.v1+json"]),
            Ok(CINCINNATI_V1)
        );
        assert!(negotiate(&["application/json;q=abc"]).is_err());
        assert_eq!(parse_quality("0.125"), Some(125));
        assert_eq!(parse_quality("1.000"), Some(1000));
        assert_eq!(parse_quality("1.5"), None);
        assert_eq!(parse_quality("0.1234"), None);
    }

    #[test]
    fn json_only_refuses_the_vendor_type() {
        assert!(MediaTypes::JSON_ONLY.negotiate(&[CINCINNATI_V1]).is_err());
        assert_eq!(MediaTypes::JSON_ONLY.negotiate(&[]), Ok(APPLICATION_JSON));
    }

    #[test]
    fn gzip_is_used_only_when_allowed() {
        assert!(accepts_gzip(&["gzip, deflate, br"]));
        assert!(accepts_gzip(&["br;q=1.0, gzip;q=0.8"]));
        assert!(accepts_gzip(&["*"]));
        assert!(accepts_gzip(&["x-gzip"]));
        assert!(!accepts_gzip(&[]));
        assert!(!accepts_gzip(&["identity"]));
        assert!(!accepts_gzip(&["gzip;q=0"]));
        assert!(!accepts_gzip(&["*, gzip;q=0"]));
    }

    proptest! {
        /// The shortcut for `gzip` alone answers as the parse does, for
        /// lines near it (spaces, case, parameters, lists) and any at all.
        #[test]
        fn gzip_alone_is_answered_as_parsed(
            values in prop::collection::vec(
                prop_oneof!["[ ]{0,2}(gzip|GZIP|x-gzip|gzi|\\*)[ ]{0,2}(;q=0|;q=1|, br)?", any::<String>()],
                0..3,
            )
        ) {
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            prop_assert_eq!(accepts_gzip(&values), accepts_gzip_parsed(&values));
        }
    }
}
