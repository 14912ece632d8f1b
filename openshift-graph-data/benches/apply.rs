//! Loading testdata/graph-data and applying it to a present-day-sized
//! release set (about 5,700 releases and 106,000 updates).

use std::path::Path;

use cincinnati_core::Graph;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use openshift_graph_data::apply::{apply_with_defaults, apply_with_defaults_to};
use openshift_graph_data::{GraphData, GraphDataFiles, Strictness};
use release_set_generator::{Settings, present_day_graph, testdata_graph_data};

/// testdata/graph-data has no phased rollout: any moment gives its graph.
const ANY_TIME: jiff::Timestamp = jiff::Timestamp::UNIX_EPOCH;

fn load(dir: &Path) -> GraphData {
    let files = GraphDataFiles::from_dir(dir).expect("testdata/graph-data is readable");
    GraphData::load(&files, &Strictness::default())
        .expect("testdata/graph-data is valid")
        .graph_data
}

fn apply(graph: &mut Graph, data: &GraphData) {
    apply_with_defaults(graph, data, ANY_TIME).expect("instructions apply");
}

fn benches(c: &mut Criterion) {
    let dir = testdata_graph_data();
    let releases = present_day_graph(&Settings::default()).expect("the release set generates");
    let mut group = c.benchmark_group("graph-data");
    group.sample_size(10);
    group.bench_function("load", |b| b.iter(|| load(&dir)));
    let data = load(&dir);
    group.bench_function("apply", |b| {
        b.iter_batched(
            || releases.clone(),
            |mut graph| apply(&mut graph, &data),
            BatchSize::LargeInput,
        )
    });
    // What `cincinnati graph-data preview` applies: one architecture's releases.
    group.bench_function("apply_to_amd64", |b| {
        b.iter_batched(
            || releases.clone(),
            |mut graph| {
                apply_with_defaults_to(&mut graph, &data, ANY_TIME, |release| {
                    release.version.build.as_str() == "amd64"
                })
                .expect("instructions apply")
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("load_and_apply", |b| {
        b.iter_batched(
            || releases.clone(),
            |mut graph| apply(&mut graph, &load(&dir)),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(graph_data, benches);
criterion_main!(graph_data);
