//! `render --format mermaid` says when Mermaid will refuse to draw: over
//! its default of 500 edges, which only the page rendering it can raise.

use crate::support::{Run, cincinnati, demo_graph_file};

fn render(args: &[&str]) -> Run {
    let demo = demo_graph_file();
    cincinnati(&[&["--graph", demo.to_str().unwrap(), "render"], args].concat())
}

fn mermaid(args: &[&str]) -> Run {
    render(&[args, &["--format", "mermaid"]].concat())
}

/// The edges of a Mermaid flowchart: `a --> b` and `a -.->|"label"| b`.
fn edges(drawing: &str) -> usize {
    drawing
        .lines()
        .filter(|line| line.contains(" --> ") || line.contains(" -.->|"))
        .count()
}

#[test]
fn a_drawing_over_mermaids_edge_limit_is_printed_with_a_warning_naming_its_count() {
    let whole = mermaid(&["--channel", "stable-4.18"]);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    let count = edges(&whole.stdout);
    assert!(count > 500, "stable-4.18 has {count} updates");
    assert_eq!(
        whole.stderr,
        format!(
            "cincinnati: warning: the drawing of stable-4.18 has {count} updates; Mermaid draws at most 500 \
             unless the page rendering it raises maxEdges (mermaid.initialize; a diagram cannot): draw less \
             with --from, or use --format dot\n"
        )
    );

    // Under the limit, or in DOT, nothing to say.
    let reachable = mermaid(&["--channel", "stable-4.18", "--from", "4.18.25"]);
    assert_eq!(reachable.code, 0, "{}", reachable.stderr);
    assert!((1..=500).contains(&edges(&reachable.stdout)));
    assert_eq!(reachable.stderr, "");
    let dot = render(&["--channel", "stable-4.18"]);
    assert_eq!((dot.code, dot.stderr.as_str()), (0, ""));
}

/// The releases a Mermaid drawing shows (`r0["4.4.3"]`; minors are
/// subgraphs, `m4_4["4.4"]`), in its order.
fn releases(drawing: &str) -> Vec<String> {
    drawing
        .lines()
        .filter_map(|line| {
            let (id, label) = line.trim().split_once("[\"")?;
            let release = id.strip_prefix('r')?.bytes().all(|byte| byte.is_ascii_digit());
            release.then(|| label.strip_suffix("\"]").map(str::to_owned))?
        })
        .collect()
}

#[test]
fn the_warning_comes_exactly_above_five_hundred_edges() {
    // stable-4.4 has a few more than 500 updates; drawn from each of its
    // oldest releases, fewer and fewer, across the limit.
    let whole = mermaid(&["--channel", "stable-4.4"]);
    let oldest: Vec<String> = releases(&whole.stdout).into_iter().take(16).collect();
    assert_eq!(oldest.len(), 16, "{}", whole.stdout);
    let mut counts = vec![edges(&whole.stdout)];
    for from in &oldest {
        let run = mermaid(&["--channel", "stable-4.4", "--from", from]);
        assert_eq!(run.code, 0, "from {from}: {}", run.stderr);
        let count = edges(&run.stdout);
        assert_eq!(
            run.stderr.is_empty(),
            count <= 500,
            "from {from}: {count} edges: {}",
            run.stderr
        );
        counts.push(count);
    }
    assert!(
        counts.iter().any(|&count| count > 500) && counts.iter().any(|&count| count <= 500),
        "every drawing on one side of the limit: {counts:?}"
    );
}
