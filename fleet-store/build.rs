//! The migrations are embedded at build time (`sqlx::migrate!`): a new or
//! changed migration must rebuild the crate.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
