use policy_engine::PolicyEngine;

/// mimalloc, with the settings of `policy_engine::allocator`, returns the
/// pages freed by answer computations and closed connections to the system;
/// glibc's malloc kept more in per-thread arenas.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    // Before the runtime's threads: it may execute the binary again.
    policy_engine::allocator::apply();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(service_kit::service::main::<PolicyEngine>(
            service_kit::source_commit!(),
        ))
}
