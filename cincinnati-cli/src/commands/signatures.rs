//! `cincinnati signatures verify`: a release's signatures, checked as the
//! cluster-version operator checks them.

use std::path::Path;

use anyhow::{Context as _, anyhow};
use cincinnati_client::json::SignaturesJson;
use cincinnati_client::signatures::{Outcome, ReleaseSignatures, check_release};
use http_fetch::ExtraRoots;
use image_signature::store::{FetchError, SignatureStore};
use image_signature::{Digest, TrustedKeys};

use crate::cli::{Format, VerifyArgs};
use crate::input::USER_AGENT;
use crate::outcome::{Answer, Failure, FailureKind};
use crate::output::{self, BAD, Cell, DIM, GOOD, HEADING, RISK, Text, styled};

pub async fn verify(args: &VerifyArgs, roots: ExtraRoots, format: Format) -> Result<Answer, Failure> {
    let keys = read_keyring(&args.keyring).map_err(Failure::input)?;
    let store = SignatureStore::new(&args.store, roots, USER_AGENT).map_err(Failure::input)?;
    let digest = Digest::from_pull_spec(&args.release).map_err(Failure::input)?;
    // The CVO asks for each of its nine signatures whatever the store
    // answered before; a store that cannot be reached at all is said once,
    // without waiting for eight more failures (DNS timeouts, offline).
    if let Err(FetchError::Http(unreachable @ http_fetch::FetchError::Transport { .. })) =
        store.fetch(&digest, 1).await
    {
        return Err(Failure {
            kind: FailureKind::Service,
            error: anyhow!(
                "the signature store {} cannot be reached: {unreachable}",
                args.store
            ),
        });
    }
    let checked = check_release(&store, &keys, &args.release)
        .await
        .map_err(Failure::input)?;
    let document = SignaturesJson::new(&args.release, &args.store, &checked);
    output::print(format, &document, |text| table(text, &document))?;
    ending(&checked, &args.store)
}

/// An ASCII-armored file, or a directory of them (as the CVO's keyring
/// ConfigMap is mounted).
fn read_keyring(path: &Path) -> anyhow::Result<TrustedKeys> {
    if path.is_dir() {
        return Ok(TrustedKeys::from_dir(path)?);
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading the keyring {}", path.display()))?;
    TrustedKeys::from_armored(&text).with_context(|| format!("the keyring {}", path.display()))
}

/// Verified: 0. Nothing verified: 1 when every signature found was checked
/// and none counts (or there is none), 3 when the store failed to answer for
/// some, which might have counted.
fn ending(checked: &ReleaseSignatures, store: &str) -> Result<Answer, Failure> {
    let digest = checked.digest.as_str();
    let found = &checked.signatures;
    let unanswered = found
        .iter()
        .filter(|signature| matches!(signature.outcome, Outcome::Unavailable(_)))
        .count();
    if checked.is_verified() {
        Ok(Answer::Yes)
    } else if found.is_empty() {
        Ok(Answer::No(format!("{store} has no signature of {digest}")))
    } else if unanswered > 0 {
        Err(Failure {
            kind: FailureKind::Service,
            error: anyhow!(
                "{store} did not answer for {unanswered} of the {} signatures of {digest}; none of the others checks out",
                found.len()
            ),
        })
    } else {
        Ok(Answer::No(format!(
            "none of the {} signatures of {digest} checks out",
            found.len()
        )))
    }
}

fn table(text: &mut Text, document: &SignaturesJson) {
    let verdict = if document.verified {
        styled(GOOD, "verified")
    } else {
        styled(BAD, "not verified")
    };
    text.line(format!(
        "{} {}: {verdict}",
        styled(HEADING, "Release"),
        document.digest
    ));
    text.line(format!("  store {}", document.store));
    if document.signatures.is_empty() {
        return;
    }
    text.blank();
    let rows = document
        .signatures
        .iter()
        .map(|signature| {
            let status = match signature.status {
                "verified" => Cell::styled(GOOD, signature.status),
                "rejected" => Cell::styled(BAD, signature.status),
                _ => Cell::styled(RISK, signature.status),
            };
            let detail = match (signature.signer, signature.identity, &signature.reason) {
                (Some(signer), Some(identity), _) => {
                    let at = signature.signed_at.as_deref().unwrap_or("undated");
                    Cell::plain(format!("{identity} by {signer}, {at}"))
                }
                (_, _, Some(reason)) => Cell::plain(reason),
                _ => Cell::styled(DIM, "-"),
            };
            vec![
                Cell::plain(format!("signature-{}", signature.index)),
                status,
                detail,
            ]
        })
        .collect();
    text.table(&["SIGNATURE", "STATUS", "DETAIL"], rows);
}
