//! Answers computed once and served many times: the bytes, their gzip form
//! and a strong ETag, answered with conditional requests (304, as
//! [`crate::conditional`] answers every route), gzip and cache headers.
//!
//! A body is the shared bytes themselves (cloning them is a reference
//! count), which the connection layer ([`crate::http1`]) hands to the
//! kernel without copying them.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Read as _, Write};
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};

use actix_web::body::{BodySize, MessageBody};
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use bytes::{Buf as _, Bytes};
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use http1_server::{Payload, Prepared};
use sha2::{Digest, Sha256};

use crate::accept::{APPLICATION_JSON, accepts_gzip, header_values};
use crate::conditional::{CachePolicy, answer_tagged, is_not_modified};
use crate::fields::RequestFields;
use crate::identity_cache::IdentityCache;

/// The `Vary` of a prepared answer: its representation follows the
/// request's `Accept` and `Accept-Encoding`.
pub const VARY: &str = "Accept, Accept-Encoding";

/// A response body prepared once: its gzip bytes, usually its identity bytes
/// too (shared, cloning is a reference count), and a digest of the identity
/// bytes for ETags.
#[derive(Debug, Clone)]
pub struct PreparedBody {
    /// `None` for a body prepared with [`PreparedBody::compressed`].
    identity: Option<Bytes>,
    identity_len: u64,
    gzip: Bytes,
    digest: String,
    /// The `ETag` fields of the JSON representations, identity and gzip:
    /// made once, as nearly every request asks for one of them.
    json_tags: [HeaderValue; 2],
    /// The header fields of the JSON answers, by gzip and by 304 (see
    /// `prepared_fields`).
    json_fields: [[OnceLock<JsonFields>; 2]; 2],
}

impl PreparedBody {
    /// Keeps `body` and compresses it eagerly, at the best level: a body is
    /// prepared once and served many times, so bytes saved outweigh
    /// milliseconds spent.
    pub fn new(body: impl Into<Bytes>) -> Self {
        let identity: Bytes = body.into();
        let mut prepared =
            Self::compressed(|out| out.write_all(&identity)).expect("compressing into memory cannot fail");
        prepared.identity = Some(identity);
        prepared
    }

    /// Prepares a large body from what `write` writes without ever holding
    /// its identity bytes: they are hashed and counted as they are
    /// compressed, and inflated again, chunk by chunk, for a client that does
    /// not accept gzip. The graph-builder's full graph is megabytes of JSON
    /// that compress tenfold, and its clients (policy-engines) take gzip.
    pub fn compressed(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<Self> {
        let mut hashing = HashingWriter {
            encoder: GzEncoder::new(Vec::new(), Compression::best()),
            hasher: Sha256::new(),
            len: 0,
        };
        // Serialisers write a few bytes at a time; deflate wants large blocks.
        let mut buffered = BufWriter::with_capacity(64 * 1024, &mut hashing);
        write(&mut buffered)?;
        buffered.flush()?;
        drop(buffered);
        // Kept in a copy of its own size, not in the buffer it grew in: mimalloc
        // answers a shrink to at least half a block with the same block, so
        // `shrink_to_fit` left a kept answer up to twice its size (8 MiB of an
        // engine's RSS at ten times today's graph, docs/benchmarks-revisions.md).
        let grown = hashing.encoder.finish()?;
        let digest = hex::encode(&hashing.hasher.finalize()[..16]);
        let json_tags = [false, true].map(|gzip| as_field(entity_tag(&digest, APPLICATION_JSON, gzip)));
        Ok(Self {
            identity: None,
            identity_len: hashing.len,
            gzip: Bytes::copy_from_slice(&grown),
            digest,
            json_tags,
            json_fields: Default::default(),
        })
    }

    pub fn gzip(&self) -> &Bytes {
        &self.gzip
    }

    /// The length of the identity bytes.
    pub fn identity_len(&self) -> u64 {
        self.identity_len
    }

    /// Writes the identity bytes to `out`.
    pub fn write_identity(&self, out: &mut impl Write) -> io::Result<()> {
        match &self.identity {
            Some(identity) => out.write_all(identity),
            None => io::copy(&mut GzDecoder::new(self.gzip.clone().reader()), out).map(drop),
        }
    }

    /// The strong ETag of one representation. The same bytes served as
    /// another media type or gzip-encoded are another representation, so
    /// they get another tag (RFC 9110 §8.8.3).
    pub fn entity_tag(&self, content_type: &str, gzip: bool) -> String {
        entity_tag(&self.digest, content_type, gzip)
    }

    /// [`PreparedBody::entity_tag`] as a field value.
    fn etag_field(&self, content_type: &str, gzip: bool) -> HeaderValue {
        if content_type == APPLICATION_JSON {
            self.json_tags[usize::from(gzip)].clone()
        } else {
            as_field(self.entity_tag(content_type, gzip))
        }
    }

    /// The entity tag [`PreparedBody::respond`] gives `request`'s
    /// representation.
    pub fn entity_tag_for(&self, request: &impl RequestFields, content_type: &str) -> String {
        self.entity_tag(
            content_type,
            accepts_gzip(&header_values(request, &header::ACCEPT_ENCODING)),
        )
    }

    /// Answers `request` with this body as `content_type`: 304 when its
    /// `If-None-Match` names the representation's ETag, gzip when its
    /// `Accept-Encoding` allows it.
    pub fn respond(
        &self,
        request: &HttpRequest,
        content_type: &'static str,
        caching: &CachePolicy,
    ) -> HttpResponse {
        self.respond_with(request, content_type, caching, None)
    }

    /// [`PreparedBody::respond`], taking a compressed-only body's identity
    /// bytes from `identities` (inflated once into it, if they fit) rather
    /// than inflating them for every request.
    pub fn respond_cached(
        &self,
        request: &impl RequestFields,
        content_type: &'static str,
        caching: &CachePolicy,
        identities: &IdentityCache,
    ) -> HttpResponse {
        self.respond_with(request, content_type, caching, Some(identities))
    }

    /// [`PreparedBody::respond_cached`] as a [`Prepared`] answer, written
    /// without an actix-web response: `None` where that is not a JSON
    /// answer of fields made already (another media type or cache policy),
    /// nor one whose body is at hand (identity bytes neither kept nor
    /// cached), which [`PreparedBody::respond_cached`] answers.
    pub fn prepared(
        &self,
        request: &impl RequestFields,
        content_type: &'static str,
        caching: &CachePolicy,
        identities: &IdentityCache,
    ) -> Option<Prepared> {
        let (gzip, _, not_modified) = self.representation(request, content_type);
        let fields = self.prepared_fields(content_type, gzip, not_modified, caching)?;
        let payload = if not_modified {
            Payload::Empty
        } else if gzip {
            Payload::Bytes(self.gzip.clone())
        } else if *request.method() == Method::HEAD {
            Payload::Announced(self.identity_len)
        } else {
            Payload::Bytes(
                self.identity
                    .clone()
                    .or_else(|| identities.get_or_inflate(self))?,
            )
        };
        Some(Prepared {
            status: if not_modified {
                StatusCode::NOT_MODIFIED
            } else {
                StatusCode::OK
            },
            fields: fields.encoded.clone(),
            vary: fields.vary.clone(),
            payload,
        })
    }

    /// Which representation `request` gets as `content_type`: gzip or not,
    /// its `ETag` field, and whether its `If-None-Match` names it (a 304).
    fn representation(&self, request: &impl RequestFields, content_type: &str) -> (bool, HeaderValue, bool) {
        let gzip = accepts_gzip(&header_values(request, &header::ACCEPT_ENCODING));
        let etag = self.etag_field(content_type, gzip);
        let not_modified = is_not_modified(request, etag.to_str().expect("a tag is visible ASCII"));
        (gzip, etag, not_modified)
    }

    fn respond_with(
        &self,
        request: &impl RequestFields,
        content_type: &'static str,
        caching: &CachePolicy,
        identities: Option<&IdentityCache>,
    ) -> HttpResponse {
        let (gzip, etag, not_modified) = self.representation(request, content_type);
        if let Some(fields) = self.prepared_fields(content_type, gzip, not_modified, caching) {
            let mut response = if not_modified {
                HttpResponse::NotModified().finish()
            } else {
                self.with_body(&mut HttpResponse::Ok(), request, gzip, identities)
            };
            *response.headers_mut() = fields.map.clone();
            return response;
        }
        answer_tagged(not_modified, etag, caching, Some(VARY), |response| {
            describe(response, content_type, gzip);
            self.with_body(response, request, gzip, identities)
        })
    }

    /// The header fields of the JSON answer (`gzip` or not, 304 or not),
    /// made once, with the first cache policy asked for (every request of
    /// a route has the same, but for answers that expire sooner): one
    /// clone in a response rather than a field inserted at a time. `None`
    /// for another media type or policy, whose fields are made each time.
    fn prepared_fields(
        &self,
        content_type: &str,
        gzip: bool,
        not_modified: bool,
        caching: &CachePolicy,
    ) -> Option<&JsonFields> {
        if content_type != APPLICATION_JSON {
            return None;
        }
        let fields = self.json_fields[usize::from(gzip)][usize::from(not_modified)].get_or_init(|| {
            let etag = self.etag_field(APPLICATION_JSON, gzip);
            let answer = answer_tagged(not_modified, etag, caching, Some(VARY), |response| {
                describe(response, APPLICATION_JSON, gzip);
                response.finish()
            });
            JsonFields::new(caching.header_value().clone(), answer.headers())
        });
        (fields.policy == caching.header_value()).then_some(fields)
    }

    /// `response` with its body: the gzip bytes, or the identity bytes
    /// (none for HEAD), kept, cached or inflated as it goes.
    fn with_body(
        &self,
        response: &mut HttpResponseBuilder,
        request: &impl RequestFields,
        gzip: bool,
        identities: Option<&IdentityCache>,
    ) -> HttpResponse {
        if gzip {
            return response.body(self.gzip.clone());
        }
        // A HEAD answer's body is never sent: announce its length without
        // inflating anything.
        if *request.method() == Method::HEAD {
            return response.body(LengthOnly(self.identity_len));
        }
        let identity = self
            .identity
            .clone()
            .or_else(|| identities.and_then(|cache| cache.get_or_inflate(self)));
        match identity {
            Some(identity) => response.body(identity),
            None => response.body(Inflating::new(self.gzip.clone(), self.identity_len)),
        }
    }

    /// The identity bytes, inflated.
    pub(crate) fn inflate(&self) -> io::Result<Bytes> {
        let mut identity = Vec::with_capacity(usize::try_from(self.identity_len).unwrap_or_default());
        self.write_identity(&mut identity)?;
        Ok(identity.into())
    }

    /// A digest of the identity bytes, naming the content.
    pub(crate) fn digest(&self) -> &str {
        &self.digest
    }

    /// A share of the gzip bytes (a reference count, not a copy).
    pub(crate) fn gzip_bytes(&self) -> Bytes {
        self.gzip.clone()
    }
}

/// The header fields of a JSON answer, with the `Cache-Control` they were
/// made with: as a map for an actix-web response, and encoded but for
/// `Vary` for a [`Prepared`] one.
#[derive(Debug, Clone)]
struct JsonFields {
    policy: HeaderValue,
    map: HeaderMap,
    encoded: Bytes,
    /// The map's `Vary`, kept apart from `encoded` for the server's layers.
    vary: Option<HeaderValue>,
}

impl JsonFields {
    /// The fields of `answer`, copied into a map of their number: a
    /// response's own has room for 12 fields, 3.4 kB kept per answer and
    /// representation (21 MiB at 10x).
    fn new(policy: HeaderValue, answer: &HeaderMap) -> Self {
        let mut map = HeaderMap::with_capacity(answer.len());
        for (name, value) in answer {
            map.append(name.clone(), value.clone());
        }
        let mut encoded = Vec::new();
        for (name, value) in map.iter().filter(|(name, _)| **name != header::VARY) {
            for part in [name.as_str().as_bytes(), b": ", value.as_bytes(), b"\r\n"] {
                encoded.extend_from_slice(part);
            }
        }
        Self {
            policy,
            vary: map.get(header::VARY).cloned(),
            map,
            encoded: encoded.into(),
        }
    }
}

/// Feeds the identity bytes to the hasher and the compressor, counting them.
struct HashingWriter {
    encoder: GzEncoder<Vec<u8>>,
    hasher: Sha256,
    len: u64,
}

impl Write for HashingWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = self.encoder.write(bytes)?;
        self.hasher.update(&bytes[..written]);
        self.len += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.encoder.flush()
    }
}

/// A body whose length is announced and whose bytes are not sent: a HEAD
/// answer.
struct LengthOnly(u64);

impl MessageBody for LengthOnly {
    type Error = io::Error;

    fn size(&self) -> BodySize {
        BodySize::Sized(self.0)
    }

    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        Poll::Ready(None)
    }
}

/// The identity bytes of a compressed-only body, inflated one chunk at a
/// time as the response is sent: a response holds one chunk, not the body.
struct Inflating {
    decoder: GzDecoder<bytes::buf::Reader<Bytes>>,
    len: u64,
    remaining: u64,
}

impl Inflating {
    const CHUNK: u64 = 64 * 1024;

    fn new(gzip: Bytes, len: u64) -> Self {
        Self {
            decoder: GzDecoder::new(gzip.reader()),
            len,
            remaining: len,
        }
    }

    fn next_chunk(&mut self) -> io::Result<Bytes> {
        let mut chunk = vec![0; Self::CHUNK.min(self.remaining) as usize];
        self.decoder.read_exact(&mut chunk)?;
        self.remaining -= chunk.len() as u64;
        Ok(Bytes::from(chunk))
    }
}

impl MessageBody for Inflating {
    type Error = io::Error;

    fn size(&self) -> BodySize {
        BodySize::Sized(self.len)
    }

    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        let inflating = self.get_mut();
        if inflating.remaining == 0 {
            return Poll::Ready(None);
        }
        Poll::Ready(Some(inflating.next_chunk()))
    }
}

/// The strong ETag of the representation of the bytes of `digest` as
/// `content_type`, gzip-encoded or not (see [`PreparedBody::entity_tag`]).
fn entity_tag(digest: &str, content_type: &str, gzip: bool) -> String {
    let mut tag = format!("\"{digest}");
    if content_type != APPLICATION_JSON {
        write!(tag, "-{:08x}", fnv1a(content_type.as_bytes())).expect("writing to a String");
    }
    if gzip {
        tag.push_str("-gzip");
    }
    tag.push('"');
    tag
}

/// The fields of a 200 that say what its body is.
fn describe(response: &mut HttpResponseBuilder, content_type: &'static str, gzip: bool) {
    response.content_type(content_type);
    if gzip {
        response.insert_header((header::CONTENT_ENCODING, "gzip"));
    }
}

fn as_field(tag: String) -> HeaderValue {
    HeaderValue::try_from(tag).expect("a quoted hex digest and suffix are a valid field value")
}

/// 32-bit FNV-1a: a short, stable tag for a media type inside an ETag.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use actix_web::body::to_bytes;
    use actix_web::http::StatusCode;
    use std::time::Duration;

    use actix_web::test::TestRequest;

    use super::*;
    use crate::accept::CINCINNATI_V1;

    const BODY: &str = r#"{"version":1,"nodes":[],"edges":[],"conditionalEdges":[]}"#;

    fn caching() -> CachePolicy {
        CachePolicy::revalidate_after(Duration::from_secs(60))
    }

    #[test]
    fn gzip_bytes_decompress_to_the_body() {
        let prepared = PreparedBody::new(BODY.repeat(100));
        let mut decompressed = String::new();
        GzDecoder::new(&prepared.gzip()[..])
            .read_to_string(&mut decompressed)
            .unwrap();
        assert_eq!(decompressed, BODY.repeat(100));
        assert!((prepared.gzip().len() as u64) < prepared.identity_len());
    }

    /// Larger than one inflated chunk, and not a multiple of it.
    fn large_body() -> String {
        (0..40_000).map(|n| format!("{n},")).collect()
    }

    #[test]
    fn a_compressed_body_is_the_same_representation_as_a_kept_one() {
        let body = large_body();
        let kept = PreparedBody::new(body.clone());
        let compressed = PreparedBody::compressed(|out| out.write_all(body.as_bytes())).unwrap();
        assert_eq!(compressed.identity_len(), body.len() as u64);
        assert_eq!(
            compressed.entity_tag(APPLICATION_JSON, false),
            kept.entity_tag(APPLICATION_JSON, false)
        );
        let mut written = Vec::new();
        compressed.write_identity(&mut written).unwrap();
        assert_eq!(written, body.as_bytes());
    }

    #[actix_web::test]
    async fn a_compressed_body_is_inflated_for_clients_without_gzip() {
        let body = large_body();
        let compressed = PreparedBody::compressed(|out| out.write_all(body.as_bytes())).unwrap();
        let request = TestRequest::get().to_http_request();
        let response = compressed.respond(&request, APPLICATION_JSON, &caching());
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers().get(header::CONTENT_ENCODING), None);
        let served = response.into_body();
        assert_eq!(served.size(), BodySize::Sized(body.len() as u64));
        assert_eq!(to_bytes(served).await.unwrap(), body.as_bytes());

        let gzip_request = TestRequest::get()
            .insert_header((header::ACCEPT_ENCODING, "gzip"))
            .to_http_request();
        let response = compressed.respond(&gzip_request, APPLICATION_JSON, &caching());
        assert_eq!(to_bytes(response.into_body()).await.unwrap(), compressed.gzip());
    }

    #[actix_web::test]
    async fn bodies_are_the_shared_bytes_not_copies() {
        let body = large_body();
        let kept = PreparedBody::new(body.clone());
        let gzip_request = TestRequest::get()
            .insert_header((header::ACCEPT_ENCODING, "gzip"))
            .to_http_request();
        let identity_request = TestRequest::get().to_http_request();
        let cases = [
            (&identity_request, kept.identity.clone().unwrap()),
            (&gzip_request, kept.gzip().clone()),
        ];
        for (request, shared) in cases {
            let served = kept
                .respond(request, APPLICATION_JSON, &caching())
                .into_body()
                .try_into_bytes()
                .expect("one piece of bytes");
            assert_eq!(served, shared);
            assert_eq!(served.as_ptr(), shared.as_ptr(), "the same memory");
        }

        let compressed = PreparedBody::compressed(|out| out.write_all(body.as_bytes())).unwrap();
        let mut inflating = compressed
            .respond(&identity_request, APPLICATION_JSON, &caching())
            .into_body();
        assert_eq!(inflating.size(), BodySize::Sized(body.len() as u64));
        let mut pieces = Vec::new();
        while let Some(piece) = std::future::poll_fn(|cx| Pin::new(&mut inflating).poll_next(cx)).await {
            pieces.push(piece.unwrap());
        }
        assert!(pieces.len() > 1, "inflated a chunk at a time");
        assert_eq!(pieces.concat(), body.as_bytes());
    }

    #[actix_web::test]
    async fn a_compressed_body_takes_its_identity_bytes_from_the_cache() {
        let body = large_body();
        let compressed = PreparedBody::compressed(|out| out.write_all(body.as_bytes())).unwrap();
        let identities = IdentityCache::new(1 << 20);
        let request = TestRequest::get().to_http_request();
        for _ in 0..2 {
            let response = compressed.respond_cached(&request, APPLICATION_JSON, &caching(), &identities);
            assert_eq!(to_bytes(response.into_body()).await.unwrap(), body.as_bytes());
            assert_eq!(identities.held_bytes(), body.len());
        }
        let gzip_request = TestRequest::get()
            .insert_header((header::ACCEPT_ENCODING, "gzip"))
            .to_http_request();
        let cold = PreparedBody::compressed(|out| out.write_all(b"{}")).unwrap();
        let response = cold.respond_cached(&gzip_request, APPLICATION_JSON, &caching(), &identities);
        assert_eq!(to_bytes(response.into_body()).await.unwrap(), cold.gzip());
        assert_eq!(
            identities.held_bytes(),
            body.len(),
            "gzip clients need no identity bytes"
        );
    }

    /// The status, header lines (sorted: a map's order is its hasher's)
    /// and body of an answer.
    async fn whole(response: HttpResponse) -> (StatusCode, Vec<(String, Vec<u8>)>, Bytes) {
        let mut fields: Vec<_> = response
            .headers()
            .iter()
            .map(|(name, value)| (name.to_string(), value.as_bytes().to_vec()))
            .collect();
        fields.sort();
        (
            response.status(),
            fields,
            to_bytes(response.into_body()).await.unwrap(),
        )
    }

    #[actix_web::test]
    async fn prepared_fields_answer_as_fields_inserted_one_by_one() {
        let kept = PreparedBody::new(BODY);
        let (first, other) = (caching(), CachePolicy::revalidate_after(Duration::from_secs(5)));
        let tags = [false, true].map(|gzip| kept.entity_tag(APPLICATION_JSON, gzip));
        let requests = || {
            [
                TestRequest::get(),
                TestRequest::get().insert_header((header::ACCEPT_ENCODING, "gzip")),
                TestRequest::get().insert_header((header::IF_NONE_MATCH, tags[0].as_str())),
                TestRequest::get()
                    .insert_header((header::ACCEPT_ENCODING, "gzip"))
                    .insert_header((header::IF_NONE_MATCH, tags[1].as_str())),
                TestRequest::default().method(Method::HEAD),
            ]
            .map(TestRequest::to_http_request)
        };
        // `kept` prepares its fields with `first`: with `other` they are
        // inserted one by one. A fresh body prepares them with `other`.
        for request in requests() {
            kept.respond(&request, APPLICATION_JSON, &first);
        }
        let fresh = PreparedBody::new(BODY);
        for request in requests() {
            let inserted = whole(kept.respond(&request, APPLICATION_JSON, &other)).await;
            let prepared = whole(fresh.respond(&request, APPLICATION_JSON, &other)).await;
            assert_eq!(prepared, inserted, "{:?}", request.headers());
        }
        let v1 = TestRequest::get().to_http_request();
        let fields = whole(fresh.respond(&v1, CINCINNATI_V1, &other)).await.1;
        assert!(fields.contains(&("content-type".to_owned(), CINCINNATI_V1.as_bytes().to_vec())));
    }

    #[test]
    fn every_representation_has_its_own_stable_tag() {
        let prepared = PreparedBody::new(BODY);
        let tags = [
            prepared.entity_tag(APPLICATION_JSON, false),
            prepared.entity_tag(APPLICATION_JSON, true),
            prepared.entity_tag(CINCINNATI_V1, false),
            prepared.entity_tag(CINCINNATI_V1, true),
        ];
        let distinct: std::collections::HashSet<_> = tags.iter().collect();
        assert_eq!(distinct.len(), 4, "{tags:?}");
        assert_eq!(PreparedBody::new(BODY).entity_tag(CINCINNATI_V1, true), tags[3]);
        assert_ne!(
            PreparedBody::new("{}").entity_tag(APPLICATION_JSON, false),
            tags[0]
        );
    }

    #[actix_web::test]
    async fn answers_304_to_a_matching_if_none_match() {
        let prepared = PreparedBody::new(BODY);
        let etag = prepared.entity_tag(APPLICATION_JSON, false);
        for if_none_match in [etag.clone(), format!("\"other\", W/{etag}"), "*".to_owned()] {
            let request = TestRequest::get()
                .insert_header((header::IF_NONE_MATCH, if_none_match.as_str()))
                .to_http_request();
            let response = prepared.respond(&request, APPLICATION_JSON, &caching());
            assert_eq!(response.status(), StatusCode::NOT_MODIFIED, "{if_none_match}");
            assert_eq!(response.headers().get(header::ETAG).unwrap(), etag.as_str());
            assert!(to_bytes(response.into_body()).await.unwrap().is_empty());
        }

        let stale = TestRequest::get()
            .insert_header((header::IF_NONE_MATCH, "\"other\""))
            .to_http_request();
        let response = prepared.respond(&stale, APPLICATION_JSON, &caching());
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(to_bytes(response.into_body()).await.unwrap(), BODY);
    }

    #[actix_web::test]
    async fn gzip_is_served_when_accepted_with_cache_headers() {
        let prepared = PreparedBody::new(BODY);
        let request = TestRequest::get()
            .insert_header((header::ACCEPT_ENCODING, "br, gzip"))
            .to_http_request();
        let response = prepared.respond(&request, CINCINNATI_V1, &caching());
        let headers = response.headers().clone();
        assert_eq!(headers.get(header::CONTENT_ENCODING).unwrap(), "gzip");
        assert_eq!(headers.get(header::CONTENT_TYPE).unwrap(), CINCINNATI_V1);
        assert_eq!(headers.get(header::VARY).unwrap(), "Accept, Accept-Encoding");
        assert_eq!(
            headers.get(header::CACHE_CONTROL).unwrap(),
            "public, max-age=60, must-revalidate"
        );
        assert_eq!(to_bytes(response.into_body()).await.unwrap(), prepared.gzip());
    }
}
