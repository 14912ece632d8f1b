//! Parse and serialise the largest real fixture (1,085 releases, 19,478
//! edges): both are on the hot path of the graph-builder and policy-engine.
//!
//! `cargo bench -p cincinnati-core --bench wire`

use std::path::Path;

use cincinnati_core::wire;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn fixture() -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures/secondary-metadata/20211124.083150/graph-gb-raw.json");
    std::fs::read(path).expect("the 2021 fixture is in testdata")
}

fn parse_and_serialise(c: &mut Criterion) {
    let json = fixture();
    let graph = wire::parse(&json).unwrap().graph;
    let output_size = wire::serialize(&graph, Some(1)).len();

    let mut group = c.benchmark_group("graph-2021-11");
    group.throughput(Throughput::Bytes(json.len() as u64));
    group.bench_function("parse", |b| b.iter(|| wire::parse(&json).unwrap()));
    group.throughput(Throughput::Bytes(output_size as u64));
    group.bench_function("serialise", |b| b.iter(|| wire::serialize(&graph, Some(1))));
    group.finish();
}

criterion_group!(benches, parse_and_serialise);
criterion_main!(benches);
