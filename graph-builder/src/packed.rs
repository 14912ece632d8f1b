//! A graph kept as gzip-compressed Graph API JSON, about a tenth of its size
//! in memory. The releases a source delivered are kept this way between
//! builds: they are read back only to build the served graph, which happens
//! when releases or graph-data change, and a build then works on its own
//! copy anyway.

use std::io::{BufReader, Write as _};

use cincinnati_core::{Graph, wire};
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

/// A packed graph. Equal graphs pack to equal bytes: serialisation is
/// canonical and compression deterministic, so comparing packs compares
/// graphs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedGraph {
    gzip: Box<[u8]>,
    releases: usize,
}

impl PackedGraph {
    pub fn pack(graph: &Graph) -> Self {
        // Packed on every change of releases: speed over the last few bytes.
        let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
        wire::serialize_into(graph, None, std::io::BufWriter::new(&mut encoder))
            .and_then(|()| encoder.flush())
            .expect("compressing into memory cannot fail");
        let gzip = encoder.finish().expect("compressing into memory cannot fail");
        Self {
            gzip: gzip.into_boxed_slice(),
            releases: graph.release_count(),
        }
    }

    /// The graph, parsed back as it is inflated: the JSON is never held whole.
    pub fn unpack(&self) -> Graph {
        let json = BufReader::new(GzDecoder::new(&self.gzip[..]));
        wire::parse_reader(json)
            .expect("a packed graph is a graph this process serialised")
            .graph
    }

    pub fn release_count(&self) -> usize {
        self.releases
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAPH: &str = r#"{"nodes":[
        {"version":"4.1.0+amd64","payload":"a","metadata":{"k":"v"}},
        {"version":"4.1.1+amd64","payload":"b","metadata":{}},
        {"version":"4.1.2+amd64"}],
      "edges":[[0,1],[1,2]],
      "conditionalEdges":[{"edges":[{"from":"4.1.0+amd64","to":"4.1.2+amd64"}],
        "risks":[{"url":"u","name":"N","message":"m","matchingRules":[{"type":"Always"}]}]}]}"#;

    fn graph(json: &str) -> Graph {
        wire::parse(json.as_bytes()).unwrap().graph
    }

    #[test]
    fn unpacks_to_the_graph_it_packed() {
        let original = graph(GRAPH);
        let packed = PackedGraph::pack(&original);
        assert_eq!(packed.unpack(), original);
        assert_eq!(packed.release_count(), 3);
    }

    #[test]
    fn packs_compare_as_their_graphs_do() {
        let reordered = GRAPH.replace("[[0,1],[1,2]]", "[[1,2],[0,1]]");
        assert_eq!(
            PackedGraph::pack(&graph(GRAPH)),
            PackedGraph::pack(&graph(&reordered))
        );
        let other = GRAPH.replace(r#""k":"v""#, r#""k":"w""#);
        assert_ne!(
            PackedGraph::pack(&graph(GRAPH)),
            PackedGraph::pack(&graph(&other))
        );
    }
}
