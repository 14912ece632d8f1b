use policy_engine::PolicyEngine;

/// mimalloc, with the settings of `policy_engine::allocator`, returns the
/// pages freed by answer computations and closed connections to the system;
/// glibc's malloc kept more in per-thread arenas.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    service_kit::service::main::<PolicyEngine>(service_kit::source_commit!()).await
}
