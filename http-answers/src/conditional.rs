//! Conditional GET, one way for every route: an answer with an entity tag
//! is 304 Not Modified when the request's `If-None-Match` names it, and
//! carries its `ETag` and `Cache-Control` either way.
//!
//! `If-None-Match` is read as RFC 9110 §13.1.2 says: `*`, or a list of
//! entity tags (in one field line or several), compared with the weak
//! comparison (§8.8.3.2: `W/"x"` and `"x"` match). An entity tag is
//! quoted and may hold a comma (`"a,b"`). A field that is not valid (an
//! unquoted tag, `*` beside tags) is ignored: the full answer is sent,
//! never a 304 the client did not ask for.

use std::time::Duration;

use actix_web::http::header::{self, HeaderValue, InvalidHeaderValue, TryIntoHeaderValue};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};

use crate::accept::header_values;
use crate::fields::RequestFields;

/// Answers `request` for a representation whose entity tag is `etag`: 304,
/// without a body, when its `If-None-Match` matches; otherwise what
/// `respond` makes of a 200. Both carry `ETag`, `Cache-Control` and `vary`
/// (if any): a 304 sends the fields the 200 would (RFC 9110 §15.4.5).
pub fn respond_tagged(
    request: &HttpRequest,
    etag: &str,
    caching: &CachePolicy,
    vary: Option<&'static str>,
    respond: impl FnOnce(&mut HttpResponseBuilder) -> HttpResponse,
) -> HttpResponse {
    answer_tagged(is_not_modified(request, etag), etag, caching, vary, respond)
}

/// Whether `request`'s `If-None-Match` names `etag`: a 304 answers it.
pub(crate) fn is_not_modified(request: &impl RequestFields, etag: &str) -> bool {
    if_none_match_matches(&header_values(request, &header::IF_NONE_MATCH), etag)
}

/// [`respond_tagged`], the `If-None-Match` already compared, with the
/// `ETag` field's value made already when the answer keeps it.
pub(crate) fn answer_tagged<V>(
    not_modified: bool,
    etag_field: V,
    caching: &CachePolicy,
    vary: Option<&'static str>,
    respond: impl FnOnce(&mut HttpResponseBuilder) -> HttpResponse,
) -> HttpResponse
where
    V: TryIntoHeaderValue,
    V::Error: Into<InvalidHeaderValue>,
{
    let mut response = if not_modified {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .insert_header((header::ETAG, etag_field))
        .insert_header((header::CACHE_CONTROL, caching.header_value().clone()));
    if let Some(vary) = vary {
        response.insert_header((header::VARY, HeaderValue::from_static(vary)));
    }
    if not_modified {
        response.finish()
    } else {
        respond(&mut response)
    }
}

/// Whether the `If-None-Match` field lines `values` match `etag` (weak
/// comparison), or are `*`. Absent or invalid: no.
pub fn if_none_match_matches(values: &[&str], etag: &str) -> bool {
    if values.is_empty() {
        return false;
    }
    let Some(wanted) = entity_tag(etag) else {
        return false;
    };
    match parse_if_none_match(values) {
        Some(IfNoneMatch::Any) => true,
        Some(IfNoneMatch::Tags(tags)) => tags.contains(&wanted),
        None => false,
    }
}

/// What an `If-None-Match` field asks.
#[derive(Debug, PartialEq, Eq)]
enum IfNoneMatch<'a> {
    /// `*`: any current representation.
    Any,
    /// The opaque tags listed (quotes included; `W/` dropped, as the weak
    /// comparison ignores it).
    Tags(Vec<&'a str>),
}

/// The opaque tag of the entity tag `[W/]"..."` at the start of `text`,
/// and the rest of `text`.
fn entity_tag_prefix(text: &str) -> Option<(&str, &str)> {
    let tagged = text.strip_prefix("W/").unwrap_or(text);
    let inside = tagged.strip_prefix('"')?;
    // etagc = %x21 / %x23-7E / obs-text: no space, no control, no DQUOTE.
    let end = inside.find(|c: char| !is_etagc(c))?;
    if !inside[end..].starts_with('"') {
        return None;
    }
    Some(tagged.split_at(end + 2))
}

/// The opaque tag of `text`, an entity tag and nothing else.
fn entity_tag(text: &str) -> Option<&str> {
    entity_tag_prefix(text).and_then(|(opaque, rest)| rest.is_empty().then_some(opaque))
}

fn is_etagc(c: char) -> bool {
    c == '\x21' || ('\x23'..='\x7e').contains(&c) || !c.is_ascii()
}

/// `If-None-Match = "*" / #entity-tag` over every field line; `None` when
/// absent or invalid.
fn parse_if_none_match<'a>(values: &[&'a str]) -> Option<IfNoneMatch<'a>> {
    if values.is_empty() {
        return None;
    }
    let (mut tags, mut any) = (Vec::new(), 0);
    for value in values {
        let mut rest = *value;
        loop {
            // #element allows empty elements and optional whitespace.
            rest = rest.trim_start_matches([' ', '\t', ',']);
            if rest.is_empty() {
                break;
            }
            if let Some(after) = rest.strip_prefix('*') {
                any += 1;
                rest = after;
            } else {
                let (tag, after) = entity_tag_prefix(rest)?;
                tags.push(tag);
                rest = after;
            }
            rest = rest.trim_start_matches([' ', '\t']);
            if !(rest.is_empty() || rest.starts_with(',')) {
                return None;
            }
        }
    }
    match (any, tags.is_empty()) {
        (0, _) => Some(IfNoneMatch::Tags(tags)),
        (1, true) => Some(IfNoneMatch::Any),
        _ => None,
    }
}

/// How long shared and private caches may reuse an answer before they
/// revalidate it with its ETag.
#[derive(Debug, Clone)]
pub struct CachePolicy {
    /// Made once: every answer carries it.
    header_value: HeaderValue,
}

impl CachePolicy {
    /// `max_age` zero: store, but revalidate every time (a cheap 304).
    pub fn revalidate_after(max_age: Duration) -> Self {
        match max_age.as_secs() {
            0 => Self::with_value("public, no-cache".to_owned()),
            seconds => Self::with_value(format!("public, max-age={seconds}, must-revalidate")),
        }
    }

    /// For an answer that never changes at its URL: caches keep it for
    /// `max_age` and never revalidate it (RFC 8246 `immutable`).
    pub fn immutable(max_age: Duration) -> Self {
        Self::with_value(format!("public, max-age={}, immutable", max_age.as_secs()))
    }

    pub fn header_value(&self) -> &HeaderValue {
        &self.header_value
    }

    fn with_value(header_value: String) -> Self {
        Self {
            header_value: HeaderValue::try_from(header_value)
                .expect("directives and digits are a valid field value"),
        }
    }
}

#[cfg(test)]
mod tests {
    use actix_web::body::to_bytes;
    use actix_web::http::StatusCode;
    use actix_web::test::TestRequest;

    use super::*;

    const ETAG: &str = "\"abc\"";

    fn matches(values: &[&str]) -> bool {
        if_none_match_matches(values, ETAG)
    }

    #[test]
    fn tags_compare_weakly() {
        assert!(matches(&["\"abc\""]));
        assert!(matches(&["W/\"abc\""]), "a weak tag matches the strong one");
        assert!(if_none_match_matches(&["\"abc\""], "W/\"abc\""));
        assert!(!matches(&["\"abd\""]));
        assert!(!matches(&["\"ABC\""]), "opaque tags compare exactly");
    }

    #[test]
    fn star_matches_any_representation_but_only_alone() {
        assert!(matches(&["*"]));
        assert!(matches(&[" * "]));
        assert!(!matches(&["*, \"abc\""]), "invalid: ignored");
        assert!(!matches(&["*", "*"]));
    }

    #[test]
    fn lists_span_commas_and_field_lines() {
        assert!(matches(&["\"x\", \"abc\""]));
        assert!(matches(&["\"x\",W/\"abc\""]));
        assert!(matches(&["\"x\"", "\"abc\""]));
        assert!(matches(&[", ,\"abc\" ,,"]), "empty elements are allowed");
        assert!(!matches(&["\"x\", \"y\""]));
        assert!(!matches(&[""]), "an empty list names nothing");
        assert!(!matches(&[]), "no field");
    }

    #[test]
    fn a_comma_inside_a_tag_is_part_of_it() {
        assert!(if_none_match_matches(&["\"a,b\""], "\"a,b\""));
        assert!(!if_none_match_matches(&["\"a,b\""], "\"a\""));
        assert!(!if_none_match_matches(&["\"a\", \"b\""], "\"a,b\""));
    }

    #[test]
    fn an_invalid_field_is_ignored() {
        for invalid in [
            "abc",
            "w/\"abc\"",
            "\"abc",
            "\"abc\" \"x\"",
            "\"a b\"",
            "\"abc\"x",
        ] {
            assert!(!matches(&[invalid]), "{invalid}");
        }
        assert!(
            !matches(&["\"abc\"", "bad"]),
            "one bad line makes the field invalid"
        );
    }

    #[actix_web::test]
    async fn a_304_carries_what_the_200_would_but_the_body() {
        let caching = CachePolicy::revalidate_after(Duration::ZERO);
        let answer = |if_none_match: Option<&str>| {
            let mut request = TestRequest::get();
            if let Some(value) = if_none_match {
                request = request.insert_header((header::IF_NONE_MATCH, value));
            }
            respond_tagged(
                &request.to_http_request(),
                ETAG,
                &caching,
                Some("Accept"),
                |response| response.content_type("text/plain").body("body"),
            )
        };
        for (if_none_match, status, body) in [
            (Some("W/\"abc\""), StatusCode::NOT_MODIFIED, ""),
            (Some("\"other\""), StatusCode::OK, "body"),
            (None, StatusCode::OK, "body"),
        ] {
            let response = answer(if_none_match);
            assert_eq!(response.status(), status, "{if_none_match:?}");
            let headers = response.headers();
            assert_eq!(headers.get(header::ETAG).unwrap(), ETAG);
            assert_eq!(headers.get(header::CACHE_CONTROL).unwrap(), "public, no-cache");
            assert_eq!(headers.get(header::VARY).unwrap(), "Accept");
            assert_eq!(to_bytes(response.into_body()).await.unwrap(), body);
        }
    }

    #[test]
    fn zero_max_age_means_always_revalidate() {
        assert_eq!(
            CachePolicy::revalidate_after(Duration::ZERO).header_value(),
            "public, no-cache"
        );
    }
}
