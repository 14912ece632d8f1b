use crate::options::Credentials;

/// The minimum bcrypt cost. distribution checks the password on every request,
/// so a higher cost would slow every test (and the benchmark) down.
const BCRYPT_COST: u32 = 4;

/// One htpasswd line. distribution's htpasswd backend accepts bcrypt entries only.
pub(crate) fn htpasswd_entry(credentials: &Credentials) -> Result<String, bcrypt::BcryptError> {
    let hash = bcrypt::hash_with_result(&credentials.password, BCRYPT_COST)?
        .format_for_version(bcrypt::Version::TwoY);
    Ok(format!("{}:{hash}\n", credentials.username))
}
