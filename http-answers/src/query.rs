//! A request's query string, read once, and the parameters a deployment
//! makes mandatory (`service.mandatory_client_parameters`).

use std::borrow::Cow;
use std::collections::BTreeSet;

use cincinnati_core::ApiError;
use smallvec::SmallVec;

/// The parameters of a query string, in order, borrowed from it unless
/// percent-decoding changed them: a request reads a handful, once each, so
/// a scan beats building a map; a handful is held without an allocation.
/// With repeated parameters the last wins, as upstream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryParameters<'a>(SmallVec<[(Cow<'a, str>, Cow<'a, str>); 4]>);

impl<'a> QueryParameters<'a> {
    /// Reads `query_string` as `application/x-www-form-urlencoded`. Without
    /// a `%` or a `+` nothing is decoded, and splitting it ourselves gives
    /// form_urlencoded's pairs (a property test holds the two together) for
    /// a tenth of its instructions: a cluster's query never has either.
    pub fn parse(query_string: &'a str) -> Self {
        // Byte by byte: both are ASCII, and a query string is short.
        if query_string.bytes().any(|byte| byte == b'%' || byte == b'+') {
            return Self(form_urlencoded::parse(query_string.as_bytes()).collect());
        }
        Self(
            query_string
                .split('&')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                    (Cow::Borrowed(name), Cow::Borrowed(value))
                })
                .collect(),
        )
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_ref())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
}

/// Parameters every request must carry. Upstream checks presence only,
/// never the value; so do we, and name every missing one in one answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequiredParameters(BTreeSet<String>);

impl RequiredParameters {
    pub fn new(names: impl IntoIterator<Item = String>) -> Self {
        Self(names.into_iter().collect())
    }

    /// These and `name` (a parameter a filter needs).
    pub fn and(mut self, name: &str) -> Self {
        self.0.insert(name.to_owned());
        self
    }

    pub fn names(&self) -> &BTreeSet<String> {
        &self.0
    }

    /// `missing_params`, naming every required parameter `query` lacks.
    pub fn check(&self, query: &QueryParameters<'_>) -> Result<(), ApiError> {
        let missing: Vec<&str> = self
            .0
            .iter()
            .filter(|name| !query.contains(name))
            .map(String::as_str)
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(ApiError::missing_params(&missing))
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Query strings of the characters that matter (separators, escapes
    /// valid and not, a space, non-ASCII), as many without `%` and `+`
    /// (the split path), and any strings at all.
    fn query_strings() -> impl Strategy<Value = String> {
        prop_oneof!["[a=&%+2B0F é✓]{0,24}", "[ab=& é✓]{0,24}", any::<String>()]
    }

    proptest! {
        #[test]
        fn parses_as_form_urlencoded_does(query in query_strings()) {
            let expected: Vec<_> = form_urlencoded::parse(query.as_bytes()).collect();
            let parsed = QueryParameters::parse(&query);
            prop_assert_eq!(parsed.0.as_slice(), expected.as_slice());
        }
    }

    #[test]
    fn the_last_repeated_parameter_wins() {
        let query = QueryParameters::parse("channel=a&channel=b&arch=fast-4%2B9");
        assert_eq!(query.get("channel"), Some("b"));
        assert_eq!(query.get("arch"), Some("fast-4+9"));
    }

    #[test]
    fn every_missing_parameter_is_named_and_an_empty_value_is_present() {
        let required = RequiredParameters::new(["version".to_owned()]).and("channel");
        assert_eq!(
            required.check(&QueryParameters::parse("arch=x")),
            Err(ApiError::missing_params(&["channel", "version"]))
        );
        assert_eq!(
            required.check(&QueryParameters::parse("channel=&version=1")),
            Ok(())
        );
    }
}
