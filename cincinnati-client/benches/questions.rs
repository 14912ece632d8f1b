//! What each `cincinnati` command computes once its graph is read, on the
//! demo graph (5,743 releases, 63,257 updates, the 2026 graph-data): the
//! command-line client must answer in under 100 ms all told
//! (scripts/bench-cli.sh measures the whole commands).
//!
//! `cargo bench -p cincinnati-client --bench questions`

use std::collections::BTreeSet;
use std::hint::black_box;

use cincinnati_client::diff::diff;
use cincinnati_client::explain::{ExplainGraphData, ExplainQuery, explain};
use cincinnati_client::plan::{PathQuery, plan};
use cincinnati_client::{Cluster, Document, Tier, UpdateGraph};
use cincinnati_core::{Version, wire};
use criterion::{Criterion, criterion_group, criterion_main};
use openshift_graph_data::{GraphData, GraphDataFiles, Strictness};
use release_set_generator::{demo_graph, testdata_graph_data};

fn v(text: &str) -> Version {
    Version::parse(text).expect("a version")
}

fn path(from: &str, to: &str, tier: Tier) -> PathQuery {
    PathQuery {
        from: v(from),
        to: v(to),
        tier,
        accepted_risks: BTreeSet::new(),
        alternatives: 20,
    }
}

fn amd64(json: &[u8]) -> UpdateGraph {
    let document = Document::classify(
        wire::parse(json).expect("the demo graph parses").graph,
        "amd64",
        None,
    );
    UpdateGraph::build("amd64", &[document])
}

fn benches(c: &mut Criterion) {
    let json = wire::serialize(&demo_graph().expect("the demo graph builds"), None);
    let document = Document::classify(wire::parse(&json).expect("it parses").graph, "amd64", None);
    let graph = UpdateGraph::build("amd64", std::slice::from_ref(&document));
    let files = GraphDataFiles::from_dir(&testdata_graph_data()).expect("testdata/graph-data reads");
    let rules = GraphData::load(&files, &Strictness::default())
        .expect("testdata/graph-data is valid")
        .graph_data;
    let graph_data = ExplainGraphData { rules, files };

    let mut group = c.benchmark_group("demo-graph");
    group.sample_size(20);
    group.bench_function("parse", |b| b.iter(|| wire::parse(black_box(&json)).unwrap()));
    group.bench_function("build amd64", |b| {
        b.iter(|| UpdateGraph::build("amd64", std::slice::from_ref(black_box(&document))))
    });
    group.bench_function("load graph-data", |b| {
        b.iter(|| {
            let files = GraphDataFiles::from_dir(&testdata_graph_data()).unwrap();
            GraphData::load(&files, &Strictness::default()).unwrap()
        })
    });

    let stable_4_18 = graph.channel("stable-4.18").expect("stable-4.18 has releases");
    let cluster = Cluster {
        version: v("4.18.20"),
        arch: "amd64".into(),
    };
    group.bench_function("updates", |b| {
        b.iter(|| stable_4_18.updates_for(black_box(&cluster)))
    });
    for (name, query) in [
        (
            "path 4.17.48 → 4.18.30 stable",
            path("4.17.48", "4.18.30", Tier::Stable),
        ),
        (
            "path 4.14.38 → 4.18.20 fast, risky",
            path("4.14.38", "4.18.20", Tier::Fast),
        ),
        (
            "path 4.14.60 → 4.16.50 eus",
            path("4.14.60", "4.16.50", Tier::Eus),
        ),
    ] {
        group.bench_function(name, |b| b.iter(|| plan(&graph, black_box(&query))));
    }
    let why = ExplainQuery {
        channel: "stable-4.16".into(),
        from: v("4.16.30"),
        to: v("4.16.32"),
    };
    group.bench_function("explain with graph-data", |b| {
        b.iter(|| explain(&graph, black_box(&why), Some(&graph_data)))
    });
    group.bench_function("every update of stable-4.18", |b| {
        b.iter(|| black_box(&stable_4_18).updates().count())
    });
    let other = amd64(&json);
    group.bench_function("diff, equal graphs", |b| {
        b.iter(|| diff(&graph, black_box(&other)))
    });
    group.finish();
}

criterion_group!(questions, benches);
criterion_main!(questions);
