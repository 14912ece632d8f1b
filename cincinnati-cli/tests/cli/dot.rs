//! Graphviz accepts what `render` draws (Debian's `graphviz`, installed by
//! scripts/install-test-deps.sh).

use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::support::{cincinnati, demo_graph_file};

#[test]
fn dot_turns_a_whole_channel_into_svg() {
    let demo = demo_graph_file();
    let drawing = cincinnati(&[
        "--graph",
        demo.to_str().unwrap(),
        "render",
        "--channel",
        "stable-4.16",
    ]);
    assert_eq!(drawing.code, 0, "{drawing:?}");
    assert!(
        drawing.stdout.contains("style=dashed"),
        "stable-4.16 has conditional updates"
    );
    let mut dot = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dot runs (scripts/install-test-deps.sh installs graphviz)");
    dot.stdin
        .take()
        .unwrap()
        .write_all(drawing.stdout.as_bytes())
        .unwrap();
    let output = dot.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "dot refused the drawing: {stderr}");
    assert!(stderr.is_empty(), "dot warned: {stderr}");
    let svg = String::from_utf8_lossy(&output.stdout);
    assert!(
        svg.contains("<svg") && svg.contains(">4.16.30<"),
        "{}",
        &svg[..svg.len().min(500)]
    );
}
