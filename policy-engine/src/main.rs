use policy_engine::PolicyEngine;

/// mimalloc returns pages freed by closed connections and finished answer
/// computations to the system; glibc's malloc kept them in per-thread arenas
/// (RSS stayed 2.5 times its resting size after a connection storm).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    service_kit::service::main::<PolicyEngine>(service_kit::source_commit!()).await
}
